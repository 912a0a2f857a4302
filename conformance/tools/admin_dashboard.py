"""Drives the operator dashboard (/admin) of a running host in headless
Chromium — Debian's /usr/bin/chromium through Playwright for Python
(`conformance/tools/playwright.sh` installs both; never
`playwright install`) — the way an operator uses it:

    python admin_dashboard.py --url http://127.0.0.1:8787 --token <owner token> \
        --rail lifi --lane 'evm->evm' [--screenshot docs/dashboard.png]

1. /admin answers 401 with the login form; a wrong token shows an alert;
   the owner token, typed and submitted with Enter, opens the dashboard.
2. Prints {"event": "rails", "rails": [...]}: the rails the page lists.
3. Clicks the lane's executeReady switch off, waits for the page to show
   it off, prints {"event": "off"} and waits for a line on stdin (the test
   quotes the lane meanwhile).
4. Turns it back on with the keyboard (focus, Space), waits, prints
   {"event": "on"}; checks the announcement and the audit table.
5. Checks a phone-sized viewport has no page-wide horizontal scroll, takes
   the screenshot when asked, prints {"event": "done"}.

Every wait is on a condition of the page, never a fixed time.
"""

import argparse
import json
import sys

from playwright.sync_api import expect, sync_playwright

p = argparse.ArgumentParser()
p.add_argument("--url", required=True)
p.add_argument("--token", required=True)
p.add_argument("--rail", required=True)
p.add_argument("--lane", required=True)
p.add_argument("--screenshot")
p.add_argument("--chromium", default="/usr/bin/chromium")
args = p.parse_args()


def say(event, **kw):
    print(json.dumps({"event": event, **kw}), flush=True)


with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    expect.set_options(timeout=20_000)

    # 1. Without the credential: 401 and the login form.
    first = page.goto(args.url + "/admin")
    assert first.status == 401, first.status
    token = page.get_by_label("Owner token")
    expect(token).to_be_visible()
    token.fill("not-the-owner-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("owner token")
    token.fill(args.token)
    token.press("Enter")
    expect(page.locator("#rails-body table")).to_be_visible()
    cookies = [c for c in context.cookies() if c["name"] == "relay_admin"]
    assert len(cookies) == 1, cookies
    c = cookies[0]
    assert c["httpOnly"] and c["sameSite"] == "Strict", c
    assert args.token not in c["value"], "the cookie must not carry the token"

    # 2. Every rail.
    rails = page.locator("#rails-body tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.rail)"
    )
    say("rails", rails=rails)

    # 3. The lane's executeReady off, by pointer.
    switch = page.locator(
        f'input[role="switch"][data-rail="{args.rail}"][data-lane="{args.lane}"]'
    )
    expect(switch).to_be_checked()
    expect(switch).to_have_accessible_name(f"executeReady of {args.rail} lane {args.lane}")
    switch.click()
    expect(switch).not_to_be_checked()
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(page.locator("#announce")).to_contain_text("is now off")
    expect(page.locator("#audit-body")).to_contain_text("lane.executeReady")
    say("off")
    sys.stdin.readline()

    # 4. Back on, by keyboard.
    switch.focus()
    page.keyboard.press("Space")
    expect(switch).to_be_checked()
    expect(switch).to_have_attribute("aria-checked", "true")
    expect(switch).to_be_focused()
    expect(page.locator("#announce")).to_contain_text("is now on")
    audit_rows = page.locator("#audit-body tbody tr")
    expect(audit_rows.first).to_contain_text("owner-token")
    say("on")

    # The live stream reports in.
    expect(page.locator("#live")).to_contain_text("live")

    if args.screenshot:
        page.screenshot(path=args.screenshot, full_page=True)

    # 5. Readable on a phone: no page-wide horizontal scroll.
    page.set_viewport_size({"width": 390, "height": 844})
    wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 1, f"the page is {wide}px wider than a phone"
    say("done")
    browser.close()
