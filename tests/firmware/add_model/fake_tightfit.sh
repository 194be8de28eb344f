#!/bin/sh
# Stands in for `tightfit compile`: appends its arguments to $FAKE_TIGHTFIT_LOG (one line a run)
# and writes the files tightfit_add_model() expects.
echo "$*" >> "$FAKE_TIGHTFIT_LOG"
while [ $# -gt 0 ]; do
  case "$1" in
    -o) dir=$2; shift ;;
    --name) name=$2; shift ;;
  esac
  shift
done
mkdir -p "$dir"
echo "int ${name}_answer();" > "$dir/$name.hpp"
echo "#include \"$name.hpp\"
int ${name}_answer() { return 42; }" > "$dir/$name.cpp"
echo "{}" > "$dir/$name.report.json"
