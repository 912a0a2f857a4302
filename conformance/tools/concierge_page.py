"""Drives the concierge page (GET /api/concierge) of a running host in
headless Chromium — Debian's /usr/bin/chromium through Playwright for
Python (`conformance/tools/playwright.sh` installs both; never
`playwright install`) — as a person asks it:

    python concierge_page.py --url http://127.0.0.1:8787 --table-question '…' \
        [--screenshot docs/concierge.png --screenshot-phone docs/concierge-phone.png]

1. Types a question whose answer is a row of a documented table (the
   test checks the API answers it so) and presses Enter: the answer shows
   as a table (its header row and the row), its code spans as code, and
   every citation of a GET endpoint is a link that opens it.
2. Clicks an example question: a figure answer, its API citations linked.
3. Asks nonsense: "I don't know", said plainly.
4. At 390 px nothing is wider than the phone.
Prints {"event": "done"}. Every wait is on the page, never a fixed time.
"""

import argparse
import json

from playwright.sync_api import expect, sync_playwright

p = argparse.ArgumentParser()
p.add_argument("--url", required=True)
p.add_argument("--table-question", required=True)
p.add_argument("--screenshot")
p.add_argument("--screenshot-phone")
p.add_argument("--chromium", default="/usr/bin/chromium")
args = p.parse_args()

with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    expect.set_options(timeout=20_000)
    page.goto(args.url + "/api/concierge")

    # 1. A table row, rendered as a table.
    page.get_by_label("Your question").fill(args.table_question)
    page.keyboard.press("Enter")
    first = page.locator("article.qa").first
    expect(first.locator("table tr")).to_have_count(2)
    expect(first.locator("table code").first).to_be_visible()
    assert "|" not in first.locator(".a").inner_text(), "raw markdown pipes shown"

    # 2. An example: its GET citations are links that open.
    page.get_by_role("button", name="Which chains are gasless?").click()
    expect(page.locator("article.qa")).to_have_count(2)
    links = page.locator("article.qa").first.locator(".cites a")
    expect(links.first).to_be_visible()
    hrefs = links.evaluate_all("as => as.map(a => a.getAttribute('href'))")
    assert all(h.startswith("/api/") for h in hrefs), hrefs
    get = [h for h in hrefs if h != "/api/docs"]
    assert get, hrefs
    for h in get:
        r = page.request.get(args.url + h)
        assert r.status < 500, (h, r.status)

    # 3. Nonsense: said plainly.
    page.get_by_label("Your question").fill("What is the airspeed velocity of an unladen swallow?")
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("article.qa.unknown")).to_have_count(1)
    expect(page.locator("article.qa.unknown")).to_contain_text("I don't know")
    if args.screenshot:
        page.screenshot(path=args.screenshot, full_page=True)

    # 4. A phone.
    page.set_viewport_size({"width": 390, "height": 844})
    wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 1, f"the page is {wide}px wider than a phone"
    if args.screenshot_phone:
        page.screenshot(path=args.screenshot_phone, full_page=True)
    print(json.dumps({"event": "done"}), flush=True)
    browser.close()
