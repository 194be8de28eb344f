/* Returns 3: QEMU must exit with 3, proving that a firmware's status reaches the host. */
int main(void) { return 3; }
