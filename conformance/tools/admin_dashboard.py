"""Drives the operator dashboard (/admin) of a running host in headless
Chromium — Debian's /usr/bin/chromium through Playwright for Python
(`conformance/tools/playwright.sh` installs both; never
`playwright install`) — the way an operator uses it:

    python admin_dashboard.py --url http://127.0.0.1:8787 --token <owner token> \
        --rail lifi --lane 'evm->evm' --route rt_… \
        [--screenshot docs/dashboard.png --screenshot-phone docs/dashboard-phone.png]

1. /admin answers 401 with the login form; a wrong token shows an alert;
   the owner token, typed and submitted with Enter, opens the dashboard.
2. Prints {"event": "rails", "rails": [...]}: the rails the page lists.
3. Clicks the lane's executeReady switch off, waits for the page to show
   it off, prints {"event": "off"} and waits for a line on stdin (the test
   quotes the lane meanwhile).
4. Turns it back on with the keyboard (focus, Space), waits, prints
   {"event": "on"}; checks the announcement and the audit table.
5. Finds the finished route --route among the recent routes by part of its
   id, then filters it out by status, and back in.
6. At desktop width and at a 390 px phone: no page-wide horizontal scroll,
   and every cell of every column of every table on screen and shown —
   on the phone each with its column's name; takes the screenshots when
   asked, prints {"event": "done"}.

Every wait is on a condition of the page, never a fixed time.
"""

import argparse
import json
import sys

from page_checks import assert_readable
from playwright.sync_api import expect, sync_playwright

p = argparse.ArgumentParser()
p.add_argument("--url", required=True)
p.add_argument("--token", required=True)
p.add_argument("--rail", required=True)
p.add_argument("--lane", required=True)
p.add_argument("--route", required=True)
p.add_argument("--screenshot")
p.add_argument("--screenshot-phone")
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

    # 5. The finished route among the recent ones, found and filtered.
    recent = page.locator("#recent-body tbody tr")
    expect(recent.filter(has_text=args.route)).to_have_count(1)
    page.get_by_label("Search").fill(args.route[3:12])
    expect(recent).to_have_count(1)
    expect(recent.first).to_contain_text(args.route)
    status = page.get_by_label("Status")
    status.select_option("FAILED")
    expect(page.locator("#recent-body")).to_contain_text("No recent route matches")
    status.select_option("DONE")
    expect(recent).to_have_count(1)

    # 6. Every column of every table readable, on a desk and on a phone.
    for width, height, shot in [(1280, 900, args.screenshot), (390, 844, args.screenshot_phone)]:
        page.set_viewport_size({"width": width, "height": height})
        page.get_by_label("Search").fill("")
        status.select_option("")
        assert_readable(page, f"at {width}px")
        assert page.locator("main table").count() >= 5
        if shot and width > 600:
            page.screenshot(path=shot, full_page=True)
        elif shot:
            # the phone: the rails and the recent routes, stacked
            page.locator("#recent").scroll_into_view_if_needed()
            page.evaluate("window.scrollTo(0, document.getElementById('recent').offsetTop - 8)")
            page.screenshot(path=shot)
    say("done")
    browser.close()
