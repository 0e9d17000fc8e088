"""The hardware tour is driven by the keyboard and clickers like the main tour (found in a new-user trial)."""

from __future__ import annotations


def test_the_hardware_tour_follows_the_arrow_keys(page, lab_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?tab=Hardware")
    page.locator(".hw-tour-next button").click()
    page.locator(".hw-card[data-step='1']").wait_for(timeout=20000)
    page.mouse.click(700, 20)  # focus the page (the header), not a widget: keys on a widget are left to it
    page.keyboard.press("ArrowRight")
    page.locator(".hw-card[data-step='2']").wait_for(timeout=5000)
    page.keyboard.press("PageDown")
    page.locator(".hw-card[data-step='3']").wait_for(timeout=5000)
    page.keyboard.press("ArrowLeft")
    page.locator(".hw-card[data-step='2']").wait_for(timeout=5000)
    page.keyboard.press("Escape")
    page.locator(".hw-card").wait_for(state="hidden", timeout=15_000)


def test_in_present_mode_a_clicker_starts_the_hardware_tour_and_the_page_stays_put(page, lab_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?tab=Hardware&present=true")
    page.locator(".hw-tour-next button").wait_for(timeout=20000)
    page.wait_for_timeout(1000)
    page.keyboard.press("PageDown")  # nothing pressed before: a clicker's first "next"
    page.locator(".hw-card[data-step='1']").wait_for(timeout=10000)
    page.keyboard.press("PageDown")
    page.locator(".hw-card[data-step='2']").wait_for(timeout=5000)
    assert page.evaluate("window.scrollY") == 0  # the clicker drives the tour, not the scroll bar


#: The text of the element that has the focus, into shadow roots.
FOCUSED_TEXT = ("(() => { let a = document.activeElement; while (a && a.shadowRoot && a.shadowRoot.activeElement) "
                "a = a.shadowRoot.activeElement; return (a.textContent || '').trim(); })()")


def test_the_sections_open_from_the_keyboard(page, lab_url):
    """A new user's trial: the section tabs took a key's focus but answered clicks only.  Each is a tab that says
    whether it is open; Enter or Space opens it, the arrows open the one beside (app/a11y.js)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?tab=Hardware")
    first = page.get_by_role("tab", name="Kernel atlas")
    first.wait_for(timeout=30000)
    assert first.get_attribute("aria-selected") == "true"
    first.focus()
    page.keyboard.press("ArrowRight")
    ceilings = page.get_by_role("tab", name="Three ceilings")
    ceilings.and_(page.locator(".bk-active")).wait_for(timeout=10000)
    assert ceilings.get_attribute("aria-selected") == "true" and first.get_attribute("aria-selected") == "false"
    # The focus stays on the open tab, drawn again by Bokeh (a keyboard trial: it fell to the page, and the next
    # arrow did nothing): the next arrow opens the one after it.
    page.wait_for_timeout(1500)  # the server's answer: Bokeh draws the section again
    assert page.evaluate(FOCUSED_TEXT) == "Three ceilings"
    page.keyboard.press("ArrowRight")
    page.get_by_role("tab", name="Tiles and waves").and_(page.locator(".bk-active")).wait_for(timeout=10000)
    page.get_by_role("tab", name="Hierarchy").focus()
    page.keyboard.press("Enter")
    page.get_by_role("tab", name="Hierarchy").and_(page.locator(".bk-active")).wait_for(timeout=10000)
    page.keyboard.press("End")
    page.get_by_role("tab", name="Generations").and_(page.locator(".bk-active")).wait_for(timeout=10000)


def test_in_present_mode_the_arrows_on_a_section_tab_move_the_tab_not_the_tour(page, lab_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?tab=Hardware&present=true")
    page.locator(".hw-tour-next button").wait_for(timeout=20000)
    page.get_by_role("tab", name="Kernel atlas").focus()
    page.keyboard.press("ArrowRight")
    page.get_by_role("tab", name="Three ceilings").and_(page.locator(".bk-active")).wait_for(timeout=10000)
    page.wait_for_timeout(1000)
    assert page.locator(".hw-card").count() == 0  # the tour did not start
    page.keyboard.press("PageDown")  # a clicker's "next" still drives the tour
    page.locator(".hw-card[data-step='1']").wait_for(timeout=10000)


def test_the_hardware_tours_buttons_pressed_from_the_keyboard_hand_the_focus_on(page, lab_url):
    """A student's trial: Enter on "Start the hardware tour ▶", on "Leave the tour" and on the last step's "Finish ✓"
    left the focus on the page's body, where the main tour's hands it to the control that takes its place."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?tab=Hardware")
    page.locator(".hw-tour-next button").focus()
    page.keyboard.press("Enter")
    page.locator(".hw-card[data-step='1']").wait_for(timeout=20000)
    page.wait_for_function(f"{FOCUSED_TEXT} === 'Next ▶'", timeout=20_000)  # the server's turn, under load
    page.locator(".hw-tour-leave button").focus()
    page.keyboard.press("Enter")
    page.locator(".hw-card").wait_for(state="hidden", timeout=15_000)
    page.wait_for_function(f"{FOCUSED_TEXT} === 'Start the hardware tour ▶'", timeout=20_000)


#: Whether the "Show your work" button says it is pressed (``%s``: "true" or "false"), into shadow roots.
PRESSED = """() => { const find = (root) => { for (const h of root.querySelectorAll('*')) { if (!h.shadowRoot) continue;
    const b = h.shadowRoot.querySelector('button[aria-pressed]');
    if (b && b.textContent.includes('Show your work')) return b;
    const f = find(h.shadowRoot); if (f) return f; } return null; };
  const b = find(document); return b !== null && b.getAttribute('aria-pressed') === '%s'; }"""


def test_show_your_work_says_whether_it_is_pressed(page, lab_url):
    """An accessibility audit: the Hardware tab's "Show your work" toggle showed its state by its fill alone."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?tab=Hardware")
    toggle = page.get_by_role("button", name="Show your work")
    toggle.wait_for(timeout=30_000)
    page.wait_for_function(PRESSED % "true", timeout=20_000)
    toggle.click()
    page.wait_for_function(PRESSED % "false", timeout=20_000)
