// Accessibility repairs the widget library leaves to the page (app/a11y.py), for the served lab's A11yFixes
// component and the offline page alike: names every checkbox, slider handle, spin button and card header after its
// visible label, makes each stop slider's handle announce the value its title shows, a checkbox's text toggle its
// box and a button group's buttons say which is pressed, in every shadow root.  `keepFixing()` repairs what the
// page builds later too, and returns its stop.
function roots(root, out) {
  out.push(root);
  for (const el of root.querySelectorAll("*")) { if (el.shadowRoot) roots(el.shadowRoot, out); }
  return out;
}
// A slider over stops (batch 1, 2, 3, 4, 5, 6, 8, 12, ...) moves an index: noUiSlider would announce
// "7.00" where the title shows "Batch B: 12". The handle says what the title shows, after every move.
function speakShownValue(handle, title) {
  const sync = () => {
    const t = title.textContent, i = t.indexOf(":");
    const shown = i < 0 ? "" : t.slice(i + 1).trim();
    if (shown && handle.getAttribute("aria-valuetext") !== shown) handle.setAttribute("aria-valuetext", shown);
  };
  new MutationObserver(sync).observe(handle, { attributes: true, attributeFilter: ["aria-valuetext"] });
  new MutationObserver(sync).observe(title, { childList: true, characterData: true, subtree: true });
  sync();
}
// The text an element shows, its shadow roots' included (style sheets aside).
function shownText(el) {
  let text = "";
  for (const n of el.childNodes) {
    if (n.nodeType === 3) text += n.textContent;
    else if (n.nodeType === 1 && !["STYLE", "SCRIPT", "LINK"].includes(n.tagName)) text += shownText(n);
  }
  return el.shadowRoot ? text + shownText(el.shadowRoot) : text;
}
// A group of choices (the lab's tab bar, any radio or checkbox button group) shows its chosen buttons by colour alone:
// each button says whether it is pressed, and says it again when a click or the server moves the choice.
function pressedFollowsActive(button) {
  const sync = () => {
    const on = String(button.classList.contains("bk-active"));
    if (button.getAttribute("aria-pressed") !== on) button.setAttribute("aria-pressed", on);
  };
  new MutationObserver(sync).observe(button, { attributes: true, attributeFilter: ["class"] });
  sync();
}
// Bokeh's tabs (the Hardware tab's sections) are divs a key can focus (tabindex 0) but not open: they answered
// clicks only. Each is a tab that says whether it is open, Enter or Space opens it, and the arrows, Home and End
// open the one beside, first or last (the WAI-ARIA tabs pattern, activation on focus).
function tabAnswersKeys(tab) {
  tab.parentNode.setAttribute("role", "tablist");
  tab.setAttribute("role", "tab");
  const sync = () => tab.setAttribute("aria-selected", String(tab.classList.contains("bk-active")));
  new MutationObserver(sync).observe(tab, { attributes: true, attributeFilter: ["class"] });
  sync();
  tab.addEventListener("keydown", (event) => {
    const all = Array.from(tab.parentNode.querySelectorAll(":scope > .bk-tab")), i = all.indexOf(tab);
    const to = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0,
                 End: all.length - 1 }[event.key];
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      tab.click();
    } else if (to !== undefined) {
      event.preventDefault();
      const next = all[(to + all.length) % all.length];
      next.focus();
      next.click();
    }
  });
}
function fix() {
  for (const root of roots(document, [])) {
    for (const box of root.querySelectorAll("input[type=checkbox]:not([data-a11y])")) {
      const label = box.parentNode.querySelector(".bk-label");
      if (!label) continue;
      box.setAttribute("data-a11y", "1");
      box.setAttribute("aria-label", label.textContent.trim());
      label.style.cursor = "pointer";
      label.addEventListener("click", () => box.click());
    }
    // A number box (Bokeh's NumericInput: the "exact" B and S boxes) is a text field to the browser: a phone showed
    // its letters keyboard. It asks for the number pad, and takes at most 20 characters: from 21 digits on
    // JavaScript writes a whole number as "1e+21", which reaches the server as a float, and Panel's whole-number
    // box raised on it (a traceback in the log, "1e+30" left in the box, no refusal); up to 20 it arrives whole
    // and the lab refuses it by its range.
    for (const input of root.querySelectorAll(".bk-spin-wrapper > input.bk-input:not([inputmode])")) {
      input.setAttribute("inputmode", "decimal");
      input.setAttribute("maxlength", "20");
    }
    // A number box's spin buttons (Bokeh's NumericInput: the "exact" B and S boxes) are drawn without text.
    for (const b of root.querySelectorAll(".bk-spin-btn:not([aria-label])")) {
      const title = b.getRootNode().querySelector(".bk-input-group label, label");
      const what = title && title.textContent.trim() ? " " + title.textContent.trim() : "";
      b.setAttribute("aria-label", (b.classList.contains("bk-spin-btn-up") ? "Increase" : "Decrease") + what);
    }
    // Panel's Card draws its title ("Levers") in shadow roots under its header button, whose own text is
    // then empty: the button is named after the title.
    for (const b of root.querySelectorAll("button.card-header:not([aria-label])")) {
      const title = shownText(b).replace(/\u200b/g, "").trim();
      if (title) b.setAttribute("aria-label", title);
    }
    // Only a group of choices: Bokeh draws a plain button in a group of its own too, and a plain button is not a
    // toggle (aria-pressed would announce it as one).
    for (const group of root.querySelectorAll(".bk-btn-group")) {
      const buttons = group.querySelectorAll(":scope > .bk-btn:not(.bk-dropdown-toggle)");
      if (buttons.length < 2) continue;
      for (const b of buttons) if (!b.hasAttribute("aria-pressed")) pressedFollowsActive(b);
    }
    // A multi-select (Bokeh's MultiChoice, drawn by Choices.js: the Hardware tab's kernels) marks each chosen
    // value's chip aria-selected, an attribute a plain element may not carry (axe: aria-allowed-attr, critical).
    // A chip is a value shown, not an option: its text says it; the options in the list keep theirs.
    for (const chip of root.querySelectorAll(".choices__list--multiple .choices__item[aria-selected]")) {
      chip.removeAttribute("aria-selected");
    }
    for (const tab of root.querySelectorAll(".bk-tab:not([role])")) tabAnswersKeys(tab);
    // The tour's card (app/tour_view.py) changes with each step a clicker or a key moves to: a screen reader reads
    // the new card when it comes, as a sighted student sees it.
    for (const card of root.querySelectorAll(".tour-caption:not([aria-live])")) card.setAttribute("aria-live", "polite");
    // Panel's notification library (Notyf) draws an icon-only dismiss button.
    for (const b of root.querySelectorAll(".notyf__dismiss-btn:not([aria-label])")) {
      b.setAttribute("aria-label", "Dismiss this notice");
    }
    for (const handle of root.querySelectorAll("[role=slider]:not([aria-label])")) {
      const title = handle.getRootNode().querySelector(".bk-slider-title");
      let text = title ? title.textContent : "";
      if (!text.trim()) {
        // Panel's discrete slider shows its label in the element before the slider.
        const prev = handle.getRootNode().host?.previousElementSibling;
        text = prev ? Array.from((prev.shadowRoot || prev).children)
          .filter((c) => !["STYLE", "LINK"].includes(c.tagName)).map((c) => c.textContent).join(" ") : "";
      }
      text = text.split(":")[0].trim();
      if (text) handle.setAttribute("aria-label", text);
      if (title) speakShownValue(handle, title);
    }
  }
}

// A phone lays out a page without a viewport tag 980 px wide and shrinks it to its screen, text and all (WCAG 1.4.10,
// reflow). Panel's served page has none (the offline page writes its own): the page reads at the phone's width.
function readAtDeviceWidth() {
  if (document.head.querySelector("meta[name=viewport]")) return;
  const meta = document.createElement("meta");
  meta.name = "viewport";
  meta.content = "width=device-width, initial-scale=1";
  document.head.appendChild(meta);
}

function keepFixing() {
  readAtDeviceWidth();
  fix();
  let pending = false;
  const later = () => { if (!pending) { pending = true; setTimeout(() => { pending = false; fix(); }, 300); } };
  const observer = new MutationObserver(later);
  observer.observe(document.body, { childList: true, subtree: true });
  const timer = setInterval(fix, 2000);  // shadow roots are out of the observer's sight
  return () => { observer.disconnect(); clearInterval(timer); };
}
