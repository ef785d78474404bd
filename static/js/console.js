// Drag and drop for upload zones: dropped files go into the zone's file input and are sent at
// once, as people expect of a drop zone (requestSubmit still checks the size limit first).
// Delegated, so a zone on a page that htmx loads (HX-Location after creating a knowledge base)
// works as well.
const dropzoneOf = (event) =>
  event.target instanceof Element ? event.target.closest("[data-dropzone]") : null;
["dragenter", "dragover"].forEach((name) =>
  document.addEventListener(name, (event) => {
    const zone = dropzoneOf(event);
    if (zone) { event.preventDefault(); zone.classList.add("over"); }
  }));
["dragleave", "drop"].forEach((name) =>
  document.addEventListener(name, (event) => dropzoneOf(event)?.classList.remove("over")));
document.addEventListener("drop", (event) => {
  const input = dropzoneOf(event)?.querySelector("input[type=file]");
  if (!input) return;
  event.preventDefault();
  input.files = event.dataTransfer.files;
  input.dispatchEvent(new Event("change", { bubbles: true }));
  if (input.files.length) input.form?.requestSubmit();
});

// Knowledge uploads: a file over data-max-bytes is refused before it is sent, and a form marked
// data-reset-on-success is cleared once htmx has had a 2xx answer for it.
document.addEventListener("change", (event) => {
  const input = event.target;
  if (!(input instanceof HTMLInputElement) || !input.dataset.maxBytes) return;
  const big = Array.from(input.files || []).filter((f) => f.size > Number(input.dataset.maxBytes));
  const names = big.map((f) => f.name).join(", ");
  input.setCustomValidity(big.length ? `${names}: over the limit of ${input.dataset.maxLabel}.` : "");
  if (big.length) input.reportValidity();
});
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.detail.elt;
  if (event.detail.successful && form instanceof HTMLFormElement && form.hasAttribute("data-reset-on-success")) {
    form.reset();
  }
});

// Moderation: a [data-check-all] box ticks or clears every checkbox of its form, rows included
// (they join the form with form="…"). Delegated, so rows swapped in by htmx are covered too.
document.addEventListener("change", (event) => {
  const all = event.target;
  if (!(all instanceof HTMLInputElement) || !all.hasAttribute("data-check-all") || !all.form) return;
  for (const box of all.form.elements) {
    if (box !== all && box.type === "checkbox") box.checked = all.checked;
  }
});

// Thread timeline: filters by kind, collapse / expand all, "next error", copy buttons. The
// filter is one attribute on #timeline that the stylesheet reads, so items that "load earlier"
// or "load later" bring in are filtered as they arrive.
const timelineRoot = () => document.getElementById("timeline");
const timelineSay = (text) => {
  const status = document.querySelector("[data-timeline-status]");
  if (status) status.textContent = text;
};
const visible = (element) => element.getClientRects().length > 0;

document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-timeline-filter]") : null;
  const root = timelineRoot();
  if (!button || !root) return;
  root.dataset.filter = button.dataset.timelineFilter;
  for (const other of document.querySelectorAll("[data-timeline-filter]")) {
    other.setAttribute("aria-pressed", String(other === button));
  }
  timelineSay("");
});

document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-timeline-fold]") : null;
  const root = timelineRoot();
  if (!button || !root) return;
  const open = button.dataset.timelineFold === "open";
  for (const fold of root.querySelectorAll("details.fold")) fold.open = open;
});

document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-next-error]") : null;
  const root = timelineRoot();
  if (!button || !root) return;
  const errors = Array.from(root.querySelectorAll(".item.is-error")).filter(visible);
  if (!errors.length) { timelineSay("No errors among the loaded messages."); return; }
  // From the error jumped to last, the next one in document order (the timeline's order); the
  // first time, the first error below the sticky toolbar. Positions are not compared after a
  // jump: the item's scroll margin, not the toolbar, decides where it lands. After the last
  // error, the first again.
  const current = root.querySelector(".item.jumped");
  let next;
  if (current) {
    next = errors.find((item) => current.compareDocumentPosition(item) & Node.DOCUMENT_POSITION_FOLLOWING);
  } else {
    const tools = document.getElementById("timeline-tools");
    const line = tools ? tools.getBoundingClientRect().bottom : 0;
    next = errors.find((item) => item.getBoundingClientRect().top >= line);
  }
  const wrapped = !next;
  next = next || errors[0];
  if (current) current.classList.remove("jumped");
  next.classList.add("jumped");
  const fold = next.querySelector("details.fold");
  if (fold) fold.open = true;
  next.scrollIntoView({ block: "start" });
  const place = `Error ${errors.indexOf(next) + 1} of ${errors.length} loaded`;
  timelineSay(wrapped && current ? `${place}: back to the first.` : `${place}.`);
});

// Copy buttons copy the text of the <pre> (or [data-copy-source]) beside them; where the
// clipboard is not allowed the text is selected instead, for Ctrl+C.
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  const pre = button?.parentElement?.querySelector("[data-copy-source], pre");
  if (!pre) return;
  const select = () => {
    const range = document.createRange();
    range.selectNodeContents(pre);
    window.getSelection()?.removeAllRanges();
    window.getSelection()?.addRange(range);
    button.textContent = "Selected";
  };
  if (!navigator.clipboard) { select(); return; }
  navigator.clipboard.writeText(pre.textContent).then(() => { button.textContent = "Copied"; }, select);
});

// Confirmation for plain forms marked data-confirm (htmx forms use hx-confirm).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

// A flash message stays until its × is pressed (status polls leave it alone).
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-dismiss]") : null;
  button?.closest(".flash")?.remove();
});

// Every code block is reachable by keyboard, so one that scrolls can be scrolled without a
// mouse: a <pre> rendered without tabindex gets one (the console's own templates set it).
const focusableCode = (root) => {
  for (const pre of root.querySelectorAll("pre:not([tabindex])")) pre.tabIndex = 0;
};
document.addEventListener("DOMContentLoaded", () => focusableCode(document));
document.addEventListener("htmx:load", (event) => focusableCode(event.detail.elt.parentElement || document));

// An htmx request that fails swaps nothing (a 400 is swapped: its fragment names what to fix):
// say so where the messages show, so that an action never fails in silence.
const sayFailed = (text) => {
  const region = document.getElementById("messages");
  if (!region) return;
  const line = document.createElement("p");
  line.className = "flash error";
  line.setAttribute("role", "alert");
  const words = document.createElement("span");
  words.textContent = text;
  const dismiss = document.createElement("button");
  dismiss.type = "button";
  dismiss.className = "dismiss";
  dismiss.dataset.dismiss = "";
  dismiss.setAttribute("aria-label", "Dismiss this message");
  dismiss.textContent = "×";
  line.append(words, " ", dismiss);
  region.replaceChildren(line);
};
document.addEventListener("htmx:responseError", (event) => {
  const status = event.detail.xhr.status;
  if (status === 403) {
    sayFailed("Not done: refused (403). Your session may have ended or you lack the role for this: reload the page.");
  } else if (status === 404) {
    sayFailed("Not done: it is no longer there (404). Reload the page to see what is.");
  } else if (status >= 500) {
    sayFailed(`Not done: the server failed (${status}); the error was logged. Try again, or reload the page.`);
  } else {
    sayFailed(`Not done: the server answered ${status}. Reload the page and try again.`);
  }
});
document.addEventListener("htmx:sendError", () =>
  sayFailed("Not done: the server could not be reached. Check the connection and try again."));

// A thread opened with ?seq=N (a search hit, a link pasted without its #m-N) shows message N,
// not the top of the page: the window around it is loaded and its fold opened by the server.
document.addEventListener("DOMContentLoaded", () => {
  const seq = new URLSearchParams(window.location.search).get("seq");
  if (seq && !window.location.hash) document.getElementById(`m-${seq}`)?.scrollIntoView({ block: "center" });
});
