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
// A group of choices (any radio or checkbox button group; the lab's tab bar is a tab list, below) shows its chosen
// buttons by colour alone: each button says whether it is pressed, and again when a click or the server moves it.
function pressedFollowsActive(button) {
  const sync = () => {
    const on = String(button.classList.contains("bk-active"));
    if (button.getAttribute("aria-pressed") !== on) button.setAttribute("aria-pressed", on);
  };
  new MutationObserver(sync).observe(button, { attributes: true, attributeFilter: ["class"] });
  sync();
}
// The WAI-ARIA tabs pattern's keys, for both tab lists below: the arrows (Up and Down too where vertical), Home and
// End give the tab to open, or null: another key, a modifier held, or a tab clicked with the pointer, whose arrows
// stay the tour's (notePointerFocus).
function tabKeyTarget(event, all, i, vertical) {
  const keys = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: all.length - 1 };
  if (vertical) Object.assign(keys, { ArrowDown: i + 1, ArrowUp: i - 1 });
  const to = keys[event.key];
  if (i < 0 || to === undefined || event.altKey || event.ctrlKey || event.metaKey) return null;
  if (all[i].hasAttribute("data-pointer-focus")) return null;
  return all[(to + all.length) % all.length];
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
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      tab.click();
      return;
    }
    const all = Array.from(tab.parentNode.querySelectorAll(":scope > .bk-tab"));
    const next = tabKeyTarget(event, all, all.indexOf(tab), true);
    if (next) {
      event.preventDefault();
      next.focus();
      next.click();
      // Bokeh draws the headers again on a change of tab: the focus goes to the open one's new header.
      const list = tab.parentNode, root = tab.getRootNode();
      const settle = (tries) => setTimeout(() => {
        if (deepFocus() !== document.body) { if (tries > 0) settle(tries - 1); return; }
        const open = (list.isConnected ? list : root).querySelector(".bk-tab.bk-active");
        if (open) open.focus();
      }, 100);
      settle(15);
    }
  });
}
// The element that has the focus, into shadow roots (the page's body when nothing has it).
function deepFocus() {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a || document.body;
}
// A control pressed from the keyboard that goes away (the tour's Start, Resume and Leave, drawn again as the tour
// starts or ends; present mode's button, drawn again in the projector's header; "Does not fit: use TP = 2", gone once
// it fits) left the focus on the page's body, and a screen reader lost its place (a keyboard trial). The focus goes
// to the control that takes its place: by the pressed one's CSS class, the first of these shown.
const SUCCESSORS = {
  "tour-next": [".tour-next", ".tour-leave"], "tour-resume": [".tour-next", ".tour-leave"],
  "tour-leave": [".tour-next"], "present-toggle": [".present-toggle"],
  "suggest-tp": [".more-levers", ".levers"], "tour-jump": [".tour-jump"],
  // The Hardware tab's own tour (a student's trial: its Start, Leave and last "Finish ✓" left the body focused).
  "hw-tour-next": [".hw-tour-next", ".hw-tour-leave"], "hw-tour-leave": [".hw-tour-next"],
};
// A closed list's arrows choose its next option at once (Chromium): "Jump to step" chosen so starts the tour, whose row
// is drawn again, and the focus fell to the page's body (a keyboard trial). Its keys are watched as a press is.
const LIST_KEYS = ["ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"];
// The keys a presenter's clicker sends (and the tour's arrows), and the buttons that pass them on to the tour.
const CLICKER_KEYS = ["PageDown", "PageUp", "ArrowRight", "ArrowLeft"];
const TOUR_BUTTONS = ["tour-next", "tour-resume", "tour-leave", "hw-tour-next", "hw-tour-leave"];
function focusable(el) {
  if (el.matches("button:not([disabled]), input, select, [tabindex='0']")) return el;
  const inner = el.shadowRoot ? el.shadowRoot.querySelectorAll("*") : [];
  for (const c of inner) { const f = focusable(c); if (f) return f; }
  for (const c of el.children) { const f = focusable(c); if (f) return f; }
  return null;
}
// A tab clicked with the pointer is marked until it loses the focus: there the arrows stay the tour's (a teacher
// clicks a tab mid-tour and presses →), where a tab the keyboard reached moves between tabs. (":focus-visible"
// cannot tell: the browser turns it on at the key press itself.)
function notePointerFocus() {
  if (window._labPointerNoted) return;
  window._labPointerNoted = true;
  document.addEventListener("pointerdown", (event) => {
    const tab = event.composedPath().find((e) => e instanceof Element && e.getAttribute("role") === "tab");
    if (tab) tab.setAttribute("data-pointer-focus", "1");
  }, true);
  document.addEventListener("focusout", (event) => {
    const left = event.composedPath()[0];
    if (left instanceof Element) left.removeAttribute("data-pointer-focus");
  }, true);
}
function keepFocusOnReplace() {
  if (window._labFocusKept) return;  // once per page, however often the repairs start
  window._labFocusKept = true;
  let generation = 0;  // any later key ends the watch of the press before it
  document.addEventListener("keydown", (event) => {
    const mine = ++generation;
    // Esc leaves a running tour wherever the focus is (app/tour_view.py): as "Leave the tour" pressed.
    const leaving = event.key === "Escape" && Array.from(roots(document, [])).some((root) =>
      Array.from(root.querySelectorAll(".tour-leave")).some((e) => e.getClientRects().length));
    const listKey = LIST_KEYS.includes(event.key);
    // A clicker's keys on a focused tour button drive the tour (app/tour_view.py), which draws the button again (an
    // accessibility audit: PageDown on a focused "Start the tour" in present mode left the body focused).
    const clickerKey = CLICKER_KEYS.includes(event.key);
    if (!["Enter", " "].includes(event.key) && !leaving && !listKey && !clickerKey) return;
    const host = leaving ? null : event.composedPath().find((e) => e instanceof Element &&
      Object.keys(SUCCESSORS).some((c) => e.classList.contains(c)));
    if (!host && !leaving) return;
    const cls = leaving ? "tour-leave" : Object.keys(SUCCESSORS).find((c) => host.classList.contains(c));
    if (listKey && !clickerKey && cls !== "tour-jump") return;
    if (clickerKey && cls !== "tour-jump" && !TOUR_BUTTONS.includes(cls)) return;
    const pressed = deepFocus();
    let placed = null;  // where this put the focus: a control drawn again can take it away once more
    const settle = (tries) => setTimeout(() => {
      const now = deepFocus();
      if (mine !== generation || (now !== document.body && now !== pressed && now !== placed)) return;  // moved on
      if (now === document.body || !now.isConnected) {
        search: for (const selector of SUCCESSORS[cls]) {
          for (const root of roots(document, [])) {
            const hit = Array.from(root.querySelectorAll(selector)).find((e) => e.getClientRects().length);
            const target = hit && focusable(hit);
            if (target) { target.focus(); placed = target; break search; }
          }
        }
      }
      if (tries > 0) settle(tries - 1);  // watched until the server's answer has been drawn
    }, 250);
    // The server's answer (present mode builds its layout; the hardware tour its first section) can take several
    // seconds on a busy machine: watched for 15 s (over 4 s, the hardware tour's row drawn again took the focus after
    // the watch had ended, in 1 of 3 full runs of the suite). Any later key, or a focus moved on, ends the watch.
    settle(60);
  }, true);
}
// A focus ring a keyboard user can see on every control (WCAG 2.4.7): Bokeh draws a 1-px dotted grey outline (about
// 2:1 on its grey buttons) and Panel's card headers none. Added to each shadow root the controls are drawn in, for
// the keyboard's focus only (:focus-visible: a click leaves no box).
const FOCUS_RING = ":focus-visible { outline: 2px solid #1a1d21 !important; outline-offset: 2px !important; }";
let focusSheet = null;
function focusRing(root) {
  if (!("adoptedStyleSheets" in root)) return;
  if (focusSheet === null) {
    focusSheet = new CSSStyleSheet();
    focusSheet.replaceSync(FOCUS_RING);
  }
  if (!root.adoptedStyleSheets.includes(focusSheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, focusSheet];
}
// The lab's tab bar (a Bokeh radio button group, app/lab.py) is a tab list (the WAI-ARIA tabs pattern): each view's
// name is a tab that says whether it is open, only the open one is a Tab stop, and the arrows, Home and End open the
// one beside, first or last, with the focus on it. A screen reader had heard fourteen toggle buttons.
function tabBar(group) {
  group.setAttribute("data-a11y-tabs", "1");
  group.setAttribute("role", "tablist");
  group.setAttribute("aria-label", "Views");
  const buttons = () => Array.from(group.querySelectorAll(":scope > .bk-btn"));
  const sync = () => {
    for (const b of buttons()) {
      const on = b.classList.contains("bk-active");
      if (b.getAttribute("role") !== "tab") b.setAttribute("role", "tab");
      if (b.getAttribute("aria-selected") !== String(on)) b.setAttribute("aria-selected", String(on));
      b.removeAttribute("aria-pressed");
      if (b.getAttribute("tabindex") !== (on ? "0" : "-1")) b.setAttribute("tabindex", on ? "0" : "-1");
    }
  };
  new MutationObserver(sync).observe(group, { attributes: true, attributeFilter: ["class"], subtree: true,
                                              childList: true });
  sync();
  group.addEventListener("keydown", (event) => {
    const all = buttons();
    const next = tabKeyTarget(event, all, all.indexOf(event.composedPath().find((e) => all.includes(e))), false);
    if (!next) return;
    event.preventDefault();
    event.stopPropagation();  // not the tour's arrows: on the tab bar they move between views
    next.focus();
    next.click();
  });
}
// A keyboard user crossed every lever and its help "?" (about twenty Tab stops) to reach the views. A link, the page's
// first Tab stop and shown only while focused, takes the focus to the open view's tab (WCAG 2.4.1, bypass blocks).
const SKIP_HIDDEN = "position:fixed;top:0;left:0;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);" +
  "white-space:nowrap;font-size:18px;";
const SKIP_SHOWN = "position:fixed;top:8px;left:8px;z-index:10000;padding:8px 14px;background:#fff;color:#1a1d21;" +
  "border:2px solid #1a1d21;border-radius:4px;font:600 18px/1.4 sans-serif;text-decoration:underline;";
let skipLink = null;
function openTab() {
  for (const root of roots(document, [])) {
    const group = root.querySelector("[data-a11y-tabs]");
    if (group) return group.querySelector(":scope > .bk-btn.bk-active") || group.querySelector(":scope > .bk-btn");
  }
  return null;
}
function skipToTheViews() {
  if (skipLink !== null && skipLink.isConnected) return;
  skipLink = document.createElement("a");
  skipLink.href = "#views";
  skipLink.className = "lab-skip";
  skipLink.textContent = "Skip to the views";
  skipLink.style.cssText = SKIP_HIDDEN;
  skipLink.addEventListener("focus", (event) => { event.target.style.cssText = SKIP_SHOWN; });
  skipLink.addEventListener("blur", (event) => { event.target.style.cssText = SKIP_HIDDEN; });
  skipLink.addEventListener("click", (event) => {
    event.preventDefault();
    const tab = openTab();
    if (tab) tab.focus();
  });
  document.body.insertBefore(skipLink, document.body.firstChild);
}
// Embed mode's Levers drawer, opened, lies over the chart's key and the link to the full lab: Tab past its last lever
// went on to them under it, a focus ring no one could see (a keyboard trial). Focus leaving the open drawer closes it,
// as a sheet closes on a click outside it; the next control is then in sight.
function within(host, el) {
  for (let n = el; n; n = n.parentNode || (n.getRootNode && n.getRootNode().host) || null) {
    if (n === host) return true;
  }
  return false;
}
function drawerClosesOnLeave(drawer) {
  drawer.setAttribute("data-a11y-drawer", "1");
  drawer.addEventListener("focusout", () => setTimeout(() => {
    const header = (drawer.shadowRoot || drawer).querySelector("button.card-header");
    if (!header || header.getAttribute("aria-expanded") !== "true") return;
    if (!within(drawer, deepFocus())) header.click();
  }, 0));
}
// A widget's help ("?", Bokeh's description tooltip) opened on the pointer's hover alone, and its text was in no
// element until then: a key could not reach it and a screen reader heard nothing (a keyboard trial). The "?" is a
// Tab stop named "Help: <its control's title>" that carries the tooltip's text as its description; the focus shows
// the tooltip as a hover does, and Esc or leaving it hides it. (Bokeh's own hover handlers show and hide it: the
// element listens for mouseenter and mouseleave, which the focus sends; the tooltip is a client-side model.)
function helpFromTheKeyboard(icon) {
  icon.setAttribute("data-a11y-help", "1");
  const title = icon.getRootNode().querySelector(".bk-input-group > label, label, .bk-slider-title");
  const what = title ? title.textContent.split(":")[0].trim() : "";
  const show = (on) => icon.dispatchEvent(new MouseEvent(on ? "mouseenter" : "mouseleave"));
  const before = new Set(document.body.querySelectorAll(":scope > .bk-Tooltip"));
  show(true);  // drawn and taken away in one task: never painted
  const tip = Array.from(document.body.querySelectorAll(":scope > .bk-Tooltip")).find((t) => !before.has(t));
  const text = tip ? shownText(tip.shadowRoot || tip).replace(/\s+/g, " ").trim() : "";
  show(false);
  if (!text) return;
  icon.setAttribute("tabindex", "0");
  icon.setAttribute("role", "button");
  icon.setAttribute("aria-label", what ? "Help: " + what : "Help");
  icon.setAttribute("aria-description", text);
  icon.addEventListener("focus", () => show(true));
  icon.addEventListener("blur", () => show(false));
  icon.addEventListener("keydown", (event) => { if (event.key === "Escape") show(false); });
}
// A change of state the page shows by colour or in a redrawn table (the memory verdict turning to "DOES NOT FIT", a
// pin renamed, removed or restored on the Pins tab) was silent to a screen reader (a keyboard trial). The server
// marks such a status with data-announce-key (which status), data-announce (the sentence) and, where the same
// sentence can recur, data-announce-seq; a change of sentence or sequence is said in one polite status region. The
// page's first values are not news, but for a sequence past 0.
let statusRegion = null;
const announced = new Map();
const watchedRoots = new WeakSet();
function say(text) {
  if (statusRegion === null || !statusRegion.isConnected) {
    statusRegion = document.createElement("div");
    statusRegion.setAttribute("role", "status");
    statusRegion.setAttribute("aria-live", "polite");
    statusRegion.className = "lab-status";
    // fixed, at the corner: absolute at the body's end it made the page 1 px taller (a 450-px embed scrolled)
    statusRegion.style.cssText = "position:fixed;top:0;left:0;width:1px;height:1px;overflow:hidden;" +
      "clip:rect(0 0 0 0);clip-path:inset(50%);white-space:nowrap;";
    document.body.appendChild(statusRegion);
  }
  statusRegion.textContent = text;
}
// The timers of statuses said once their changes settle (data-announce-settle: ms without another change).
const settling = new Map();
function announceChanges(root) {
  for (const el of root.querySelectorAll("[data-announce-key]")) {
    const key = el.getAttribute("data-announce-key");
    const text = el.getAttribute("data-announce") || "", seq = el.getAttribute("data-announce-seq") || "";
    const now = seq + "\u0000" + text, before = announced.get(key);
    announced.set(key, now);
    // A status with a sequence is news from its first change on (the Pins tab's, drawn with its first action).
    if (!(text && before !== now && (before !== undefined || (seq !== "" && seq !== "0")))) continue;
    // A status that asks for it (the result of a move, app/readouts.py result_announcement) is said once its
    // changes settle: a slider dragged through ten stops says the last, not ten.
    const settle = Number(el.getAttribute("data-announce-settle") || 0);
    if (settle > 0) {
      clearTimeout(settling.get(key));
      settling.set(key, setTimeout(() => { if (announced.get(key) === now) say(text); }, settle));
    } else {
      say(text);
    }
  }
}
function watchAnnouncements(root) {
  if (watchedRoots.has(root) || !root.querySelector("[data-announce-key]")) return;
  watchedRoots.add(root);
  new MutationObserver(() => announceChanges(root)).observe(root, {
    childList: true, subtree: true, attributes: true,
    attributeFilter: ["data-announce", "data-announce-seq"] });
  announceChanges(root);
}
// A tour link opened on a phone (?tour=5, a teacher's shared step): the card sits under the levers, a screen or more
// down, and a student saw the Model and GPU selects, not the step.  Once, when the card is first drawn, the page
// scrolls to it; a wider page shows the card beside the chart already.
const PHONE_WIDTH = 640;
let tourLinkShown = !/[?&]tour=\d/.test(window.location.search);
function showTheTourLinksCard(root) {
  if (tourLinkShown || window.innerWidth >= PHONE_WIDTH) { tourLinkShown = true; return; }
  const card = root.querySelector(".tour-card[data-step]");
  if (card === null) return;
  tourLinkShown = true;
  // In present mode the card follows the tour's buttons at the page's top (app/tour_view.py PHONE_ORDER_CSS): the
  // page stays there, with the numbers strip and "Next" in view (scrolled to the card, they were above it).
  const host = card.getRootNode().host;
  if (host && host.classList.contains("present")) return;
  card.scrollIntoView({ block: "start" });
}
// The Ladder table's rows in present mode scroll in a box that opens at its end, the newest rung, under a sticky head
// (app/lab.css): the end cut the row above mid-line ("p)" and "memory" peeked under the head) and could hide the rung
// the card compares with (a teacher's trial, tour step 24).  Once a box is laid out it comes to rest with a whole row
// under the head: the rung before the newest where the newest still shows whole below it on the screen, else that
// rung's summary, else the newest rung itself (blank room under the last row, where it takes that).
function alignLadderRows(root) {
  for (const box of root.querySelectorAll(".ladder-rows:not([data-aligned])")) {
    if (box.clientHeight === 0) continue;  // not laid out yet (another tab): aligned when it is
    box.setAttribute("data-aligned", "");
    const rows = Array.from(box.querySelectorAll("tr[data-rung], tr.summary"));
    const rungs = rows.filter((row) => row.hasAttribute("data-rung")), head = box.querySelector("th");
    if (rungs.length < 2 || head === null || box.scrollHeight <= box.clientHeight) continue;
    const newest = rungs[rungs.length - 1], top = box.getBoundingClientRect().top + head.getBoundingClientRect().height;
    const bottom = Math.min(box.getBoundingClientRect().bottom, window.innerHeight);  // what the screen shows of it
    for (const row of rows.slice(rows.indexOf(rungs[rungs.length - 2]), rows.indexOf(newest) + 1)) {
      const delta = row.getBoundingClientRect().top - top;
      if (newest.getBoundingClientRect().bottom - delta <= bottom + 1 || row === newest) {
        // Down past the end (where the box opens) is room under the last row: the box stays at its end as it grows.
        if (delta > 0) box.querySelector("table").style.marginBottom = `${delta}px`;
        else box.scrollTop += delta;
        break;
      }
    }
  }
}
// The text of the chart a canvas layer draws: the nearest figure element around it that carries one.
function chartText(layer) {
  for (let node = layer.getRootNode(); node && node.host; node = node.host.getRootNode()) {
    const text = node.host.getAttribute("data-chart");
    if (text) return text;
  }
  return "Chart";
}
function fix() {
  for (const root of roots(document, [])) {
    showTheTourLinksCard(root);
    alignLadderRows(root);
    watchAnnouncements(root);
    for (const icon of root.querySelectorAll(".bk-description:not([data-a11y-help])")) helpFromTheKeyboard(icon);
    for (const drawer of root.querySelectorAll(".embed-drawer:not([data-a11y-drawer])")) drawerClosesOnLeave(drawer);
    focusRing(root);
    // The page's content is its main landmark (axe: "region", every node outside one).
    // (tables: table.lab); the embed's column (div.embed) in an iframe.
    for (const page of root.querySelectorAll("div.lab:not([role]), div.embed:not([role])")) {
      page.setAttribute("role", "main");
    }
    for (const group of root.querySelectorAll(".bk-btn-group:not([data-a11y-tabs])")) {
      const host = group.getRootNode().host;
      if (host && host.classList.contains("lab-tabs")) { tabBar(group); skipToTheViews(); }
    }
    for (const box of root.querySelectorAll("input[type=checkbox]:not([data-a11y])")) {
      const label = box.parentNode.querySelector(".bk-label");
      if (!label) continue;
      box.setAttribute("data-a11y", "1");
      box.setAttribute("aria-label", label.textContent.trim());
      label.style.cursor = "pointer";
      label.addEventListener("click", () => box.click());
    }
    // A number box (Bokeh's NumericInput: the "exact" B and S boxes, the Hardware and Serving tabs' boxes) is a text
    // field to the browser: a phone showed its letters keyboard. It asks for the number pad, and takes at most 19
    // characters: a whole number of 20 digits (2^64 and over) reaches the server as an integer numpy cannot take, and
    // Panel's number box raised on it (a traceback in the log, the box and the model apart, no refusal); up to 19 it
    // arrives as a number and the lab refuses it by its range.
    for (const input of root.querySelectorAll(".bk-spin-wrapper > input.bk-input:not([inputmode])")) {
      input.setAttribute("inputmode", "decimal");
      input.setAttribute("maxlength", "19");
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
    // ... and says whether its card is open: an open card shows its items beside the header, a closed one none.  A
    // card drawn closed (present mode's Levers) still holds its items, hidden: it said "expanded" until opened and
    // closed again (an accessibility audit), so what counts is an item shown, as it changes.
    for (const b of root.querySelectorAll("button.card-header:not([aria-expanded])")) {
      const card = b.parentNode;
      const sync = () => {
        const open = Array.from(card.children).some((c) => c !== b && !["STYLE", "LINK"].includes(c.tagName)
                                                        && getComputedStyle(c).display !== "none");
        if (b.getAttribute("aria-expanded") !== String(open)) b.setAttribute("aria-expanded", String(open));
      };
      new MutationObserver(sync).observe(card, { childList: true, subtree: true,
                                                 attributeFilter: ["style", "class"] });
      sync();
    }
    // A multi-select (Choices.js: the Hardware tab's "Ops, in order") types into an input with no name: it takes its
    // widget's title. A text area with no title (Bring your own's paste boxes) takes its placeholder's first line.
    // (Choices.js itself writes the text "null" where it has no name.)
    for (const box of root.querySelectorAll(".choices:not([aria-label]), .choices input:not([aria-label]), " +
                                            ".choices input[aria-label=null]")) {
      const title = box.getRootNode().querySelector(".bk-input-group > label, label");
      if (title && title.textContent.trim()) box.setAttribute("aria-label", title.textContent.trim());
    }
    // A chart's canvas takes the focus (its tools' keys) with no name: its title is drawn, not text.  It takes the
    // text its figure carries (app/style.py describe_chart: what it plots, and where its figures are as text).
    for (const layer of root.querySelectorAll(".bk-events[tabindex]:not([aria-label])")) {
      layer.setAttribute("role", "figure");  // not "img": a figure may hold its toolbar's buttons
      layer.setAttribute("aria-label", chartText(layer));
    }
    for (const area of root.querySelectorAll("textarea:not([aria-label])")) {
      const title = area.getRootNode().querySelector("label");
      const placeholder = (area.getAttribute("placeholder") || "").split("\n")[0].replace(/^…/, "").trim();
      if (!(title && title.textContent.trim()) && placeholder) area.setAttribute("aria-label", placeholder);
    }
    // Only a group of choices: Bokeh draws a plain button in a group of its own too, and a plain button is not a
    // toggle (aria-pressed would announce it as one).
    for (const group of root.querySelectorAll(".bk-btn-group:not([data-a11y-tabs])")) {
      const buttons = group.querySelectorAll(":scope > .bk-btn:not(.bk-dropdown-toggle)");
      if (buttons.length < 2) continue;
      for (const b of buttons) if (!b.hasAttribute("aria-pressed")) pressedFollowsActive(b);
    }
    // A toggle button on its own (Bokeh's Toggle: the Hardware tab's "Show your work") shows its state by its fill
    // alone: it says it as a group's buttons do (an accessibility audit).
    if (root.host && root.host.classList.contains("bk-Toggle")) {
      const b = root.querySelector("button.bk-btn:not([aria-pressed])");
      if (b) pressedFollowsActive(b);
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
  say("");  // the status region is in the page before its first sentence: a region added already filled goes unread
  keepFocusOnReplace();
  notePointerFocus();
  fix();
  let pending = false;
  const later = () => { if (!pending) { pending = true; setTimeout(() => { pending = false; fix(); }, 300); } };
  const observer = new MutationObserver(later);
  observer.observe(document.body, { childList: true, subtree: true });
  const timer = setInterval(fix, 2000);  // shadow roots are out of the observer's sight
  return () => { observer.disconnect(); clearInterval(timer); };
}
