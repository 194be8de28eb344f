#!/usr/bin/env python3
"""Every NAME.report.html in DIR opens in headless Chromium with nothing on the console (no
script error, no failed load), and its screenshot, kept as DIR/NAME.screenshot.png for people
to look at, is not blank. SKIPPED (exit 77, said on the output) where chromium or python3-pil
is not installed."""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    print("SKIPPED: chromium is not installed (apt-get install chromium); the HTML was not opened")
    sys.exit(77)
try:
    from PIL import Image
except ImportError:
    print("SKIPPED: python3-pil is not installed (apt-get install python3-pil); the HTML was not opened")
    sys.exit(77)


def open_in_chromium(page, screenshot):
    """Chromium's stderr log; console messages appear in it as lines with ':CONSOLE'."""
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
             "--window-size=1500,2400", f"--screenshot={screenshot}", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120)
    return result.returncode, result.stderr


def blank_reason(png):
    """Why the screenshot looks blank, or None: a page with a map and tables has many colours and
    a fair share of pixels that are not background."""
    image = Image.open(png).convert("RGB")
    small = image.resize((image.width // 4, image.height // 4))
    pixels = list(small.getdata())
    colours = len(set(pixels))
    inked = sum(1 for p in pixels if p != (255, 255, 255)) / len(pixels)
    if colours < 16 or inked < 0.02:
        return f"{colours} colours, {inked:.1%} of the pixels not white"
    return None


def main(folder):
    failures = []
    pages = sorted(pathlib.Path(folder).glob("*.report.html"))
    if not pages:
        failures.append(f"no pages in {folder}")
    for page in pages:
        screenshot = page.with_name(page.name.replace(".report.html", ".screenshot.png"))
        if screenshot.exists():
            os.remove(screenshot)
        status, log = open_in_chromium(page, screenshot)
        console = [line for line in log.splitlines() if ":CONSOLE" in line]
        failures += [f"{page.name}: console: {line}" for line in console]
        if status != 0 or not screenshot.exists():
            failures.append(f"{page.name}: chromium exited {status} without a screenshot")
            continue
        reason = blank_reason(screenshot)
        if reason:
            failures.append(f"{page.name}: the screenshot looks blank ({reason})")
        print(f"{page.name}: opened, {len(console)} console messages, screenshot {screenshot}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
