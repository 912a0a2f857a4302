"""Drives the route explorer of a running host in headless Chromium —
Debian's /usr/bin/chromium through Playwright for Python
(`conformance/tools/playwright.sh` installs both; never
`playwright install`) — the way a user and an operator use it:

    python explorer_page.py --url http://127.0.0.1:8787 --token <owner token> \
        --route rt_… --src-tx 0x… --sender 0x… \
        [--screenshot docs/explorer.png --screenshot-phone docs/explorer-phone.png]

1. The public page, searched by the route's id (typed, Enter): prints
   {"event": "public", ...} with what each section shows — the stages,
   the transactions, the fee lines, the rails ranked and the verdict.
2. The public page searched by the route's source transaction: prints
   {"event": "coarse", "text": ...}: the page's text, so the test can
   check that neither the id nor any address shows.
3. The operator's page (/admin/explorer, the owner token as a bearer
   credential) searched by the sender's address: the route is listed with
   its id; following the id shows it in full. Prints {"event": "operator"}.
4. At 1280 px and at a 390 px phone: no page-wide horizontal scroll, and
   every cell of every table on screen and named on the phone; takes the
   screenshots when asked; prints {"event": "done"}.

Every wait is on a condition of the page, never a fixed time.
"""

import argparse
import json

from page_checks import assert_readable
from playwright.sync_api import expect, sync_playwright

p = argparse.ArgumentParser()
p.add_argument("--url", required=True)
p.add_argument("--token", required=True)
p.add_argument("--route", required=True)
p.add_argument("--src-tx", required=True)
p.add_argument("--sender", required=True)
p.add_argument("--screenshot")
p.add_argument("--screenshot-phone")
p.add_argument("--chromium", default="/usr/bin/chromium")
args = p.parse_args()

def say(event, **kw):
    print(json.dumps({"event": event, **kw}), flush=True)


def cells(page, table):
    return page.locator(f"#{table} tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent))")


def search(page, q):
    box = page.get_by_label("Route id, transaction hash or address")
    box.fill(q)
    box.press("Enter")


with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    expect.set_options(timeout=20_000)

    # 1. public, by id: the whole route
    page.goto(args.url + "/explorer")
    expect(page.get_by_role("heading", name="Route explorer")).to_be_visible()
    search(page, args.route)
    expect(page.locator("#route-title")).to_have_text(f"Route {args.route}")
    expect(page.locator("#outcome dd").first).not_to_be_empty()
    expect(page.locator("#txs tbody tr").first).to_contain_text(args.src_tx)
    expect(page.locator("#why tbody tr").first).to_be_visible()
    expect(page.locator("#fees tbody tr").first).to_be_visible()
    say("public",
        stages=cells(page, "stages"), txs=cells(page, "txs"), fees=cells(page, "fees"),
        why=cells(page, "why"), outcome=page.locator("#outcome").inner_text(),
        summary=page.locator("#summary").inner_text(), url=page.url)
    for width, height, shot in [(1280, 900, args.screenshot), (390, 844, args.screenshot_phone)]:
        page.set_viewport_size({"width": width, "height": height})
        assert_readable(page, f"at {width}px")
        if shot:
            page.screenshot(path=shot, full_page=width > 600)
    page.set_viewport_size({"width": 1280, "height": 900})

    # 2. public, by the source transaction: coarse only
    search(page, args.src_tx)
    expect(page.locator("#message")).to_contain_text("found")
    expect(page.locator("#found-table tbody tr")).to_have_count(1)
    expect(page.locator("#route")).to_be_hidden()
    say("coarse", text=page.locator("main").inner_text())

    # 3. the operator, by the sender's address: the route in full
    operator = browser.new_page(viewport={"width": 390, "height": 844},
                                extra_http_headers={"authorization": f"Bearer {args.token}"})
    operator.goto(args.url + "/admin/explorer")
    search(operator, args.sender)
    link = operator.get_by_role("link", name=args.route)
    expect(link).to_be_visible()
    link.click()
    expect(operator.locator("#route-title")).to_have_text(f"Route {args.route}")
    expect(operator.locator("#txs tbody tr").first).to_contain_text(args.src_tx)
    assert_readable(operator, "the operator at 390px")
    say("operator", found=cells(operator, "found-table"))
    say("done")
    browser.close()
