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
    page.locator(".hw-card").wait_for(state="hidden", timeout=5000)


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
