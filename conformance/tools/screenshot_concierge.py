"""Screenshots the concierge page (GET /api/concierge) of a running host in
headless Chromium, after asking it two questions, into docs/concierge.png.

    # Debian's chromium and Playwright for Python (never `playwright install`):
    apt-get install -y chromium
    python3 -m venv /tmp/pw && /tmp/pw/bin/pip install playwright==1.65.2
    conformance/up.sh --chains 8453,42161 &      # a devnet host on :8787
    /tmp/pw/bin/python conformance/tools/screenshot_concierge.py \
        [--url http://127.0.0.1:8787] [--out docs/concierge.png] [--mobile]

It types with the keyboard (focus, Enter) and clicks an example button, as a
person would; it waits for the answers, never for a fixed time.
"""

import argparse
import pathlib

from playwright.sync_api import sync_playwright

root = pathlib.Path(__file__).resolve().parents[2]
p = argparse.ArgumentParser()
p.add_argument("--url", default="http://127.0.0.1:8787")
p.add_argument("--out", default=str(root / "docs" / "concierge.png"))
p.add_argument("--mobile", action="store_true", help="a 390x844 phone viewport")
args = p.parse_args()

with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    viewport = {"width": 390, "height": 844} if args.mobile else {"width": 1000, "height": 900}
    page = browser.new_page(viewport=viewport)
    page.goto(f"{args.url}/api/concierge")
    page.get_by_label("Your question").fill("What fee does a member pay?")
    page.keyboard.press("Enter")
    page.locator("article.qa").nth(0).wait_for()
    page.get_by_role("button", name="Which chains are gasless?").click()
    page.locator("article.qa").nth(1).wait_for()
    page.get_by_label("Your question").fill("What is the airspeed velocity of an unladen swallow?")
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator("article.qa").nth(2).wait_for()
    page.screenshot(path=args.out, full_page=True)
    browser.close()
print(args.out)
