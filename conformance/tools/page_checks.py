"""What the browser tests check of every page with tables (the dashboard,
the route explorer): at the page's current width, no page-wide horizontal
scroll, and every cell of every shown table on screen and shown — where a
table is stacked (a phone), each cell named by its column.

    from page_checks import assert_readable
    assert_readable(page, "at 390px")
"""

UNREADABLE = """() => {
  const bad = [];
  for (const t of document.querySelectorAll("main table")) {
    if (t.closest("[hidden]")) continue;
    const cols = t.tHead.rows[0].cells.length;
    const name = t.caption ? t.caption.textContent : t.id || t.closest("section").id;
    for (const row of t.tBodies[0].rows) {
      const spans = [...row.cells].reduce((n, c) => n + c.colSpan, 0);
      if (spans !== cols) bad.push(name + ": a row of " + spans + " columns");
      for (const c of row.cells) {
        const r = c.getBoundingClientRect();
        const st = getComputedStyle(c);
        const off = st.display === "none" || st.visibility === "hidden" || r.width < 1
          || r.left < -1 || r.right > window.innerWidth + 1;
        const stacked = getComputedStyle(t).display === "block";
        const unnamed = stacked && !c.dataset.label;
        if (off || unnamed) bad.push(name + ": " + (c.dataset.label || "?") + (off ? " off-screen" : " unnamed"));
      }
    }
  }
  return bad;
}"""


def assert_readable(page, where):
    """Fails naming every cell `page` does not show readably (`where`
    says at which width)."""
    wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 1, f"{where} the page is {wide}px wider than the window"
    bad = page.evaluate(UNREADABLE)
    assert not bad, f"{where}: {bad}"
