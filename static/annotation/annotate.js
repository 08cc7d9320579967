/* The labelling page (Ekphrasis App. H–J). Keyboard first; saving is a contract:
 * every submission carries an idempotency key generated once per item, the page says "Saved"
 * only after the server confirmed, and a failed request is retried without losing the answer.
 * Z (or the "Previous label" button) shows the previous item as it was seen, prefilled with the
 * annotator's label; saving it stores a new version of that label (never an overwrite), then the
 * current item comes back as it was left.
 * All content is inserted with textContent (never innerHTML): item text cannot inject markup. */
(function () {
  "use strict";
  const cfg = JSON.parse(document.getElementById("annotate-config").textContent);
  const $ = (sel) => document.querySelector(sel);
  const itemBox = $("#item"), choicesBox = $("#choices"), statusBox = $("#save-status");
  const MAX_AUTO_RETRIES = 5;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  const kbd = (k) => el("kbd", { text: k });
  const append = (box, ...nodes) => box.append(...nodes.filter(Boolean));

  function uuid4() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  function csrfToken() {
    const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }

  // A campaign paused for review (its texts name a model now): nothing of it stays on the page (the
  // instructions and calibration overlays hold its texts); the reloaded page shows only the neutral
  // message — the annotator's queue says it, a participant's study page says it.
  function leaveIfPaused(status, data) {
    if (status === 409 && data && data.error === "campaign_paused") location.reload();
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      redirect: "manual",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(body || {}),
    });
    let data = null;
    if (response.type !== "opaqueredirect") {
      try { data = await response.json(); } catch (e) { data = null; }
    }
    leaveIfPaused(response.status, data);
    const retryAfter = parseInt(response.headers.get("Retry-After") || "", 10);
    return { status: response.type === "opaqueredirect" ? 401 : response.status, data,
             retryAfterMs: Number.isFinite(retryAfter) ? retryAfter * 1000 : null };
  }

  async function get(url) {
    const response = await fetch(url, { credentials: "same-origin", redirect: "manual", headers: { Accept: "application/json" } });
    let data = null;
    if (response.type !== "opaqueredirect") {
      try { data = await response.json(); } catch (e) { data = null; }
    }
    leaveIfPaused(response.status, data);
    return { status: response.type === "opaqueredirect" ? 401 : response.status, data };
  }

  // ------------------------------------------------------------------ an answer sent but not yet confirmed
  // It outlives the page: kept in this tab's sessionStorage with its idempotency key until the server
  // answers it, and sent again with the same key when the page comes back (a reload, Back, a restart
  // of the browser tab), so an answer given while the server was unreachable is not lost with the page.
  // The server stores a key once, so sending it again never makes a second label.
  const PENDING = "atelier-pending-answer:" + cfg.next;
  function pendingRead() {
    try { return JSON.parse(sessionStorage.getItem(PENDING) || "null"); } catch (e) { return null; }
  }
  function pendingKeep(token, body) {
    try { sessionStorage.setItem(PENDING, JSON.stringify({ token, body })); } catch (e) { /* storage off: as before */ }
  }
  function pendingDone(token) {
    const p = pendingRead();
    if (p && p.token === token) try { sessionStorage.removeItem(PENDING); } catch (e) { /* nothing kept */ }
  }
  // the server decided (a lapsed session, 401, is not a decision: the answer waits for the next login)
  const answered = (status) => status !== 0 && status !== 401 && status < 500 && status !== 429;
  // A kept answer for another item than the one handed now (its assignment ran out meanwhile, or it
  // was stored and only the confirmation was lost): sent on its own; the server stores it late while
  // its slot is free, replays it if it was stored, or refuses it.
  async function pendingSendAlone(p) {
    let r;
    try { r = await post(cfg.submit.replace("TOKEN", encodeURIComponent(p.token)), p.body); } catch (e) { return; }
    if (answered(r.status)) pendingDone(p.token);
  }

  // ------------------------------------------------------------------ state
  let state = null; // {assignment, key, ctrl, flag, saving, saved, closed, retries, timer, visibleMs, visibleSince}
  let skipArmed = false;
  let loading = false; // a next-item request is in flight

  function elapsedMs() {
    if (!state) return null;
    let ms = state.visibleMs;
    if (state.visibleSince !== null) ms += performance.now() - state.visibleSince;
    return Math.max(0, Math.round(ms));
  }
  document.addEventListener("visibilitychange", () => {
    if (!state) return;
    if (document.visibilityState === "hidden" && state.visibleSince !== null) {
      state.visibleMs += performance.now() - state.visibleSince;
      state.visibleSince = null;
    } else if (document.visibilityState === "visible" && state.visibleSince === null) {
      state.visibleSince = performance.now();
    }
  });

  // Active time (issue 25, crowd campaigns' pay and too-fast flags): the item's time while the page is
  // visible and focused and the person used the keyboard, mouse or touch within the last ACTIVE_IDLE_MS
  // (reading counts while they keep interacting; a page left open in a corner does not). Sent with the
  // label as active_ms; the server clamps it to the wall time the item was held.
  const ACTIVE_IDLE_MS = 30000, ACTIVE_TICK_MS = 200;
  let lastInput = performance.now(), lastTick = performance.now();
  for (const type of ["keydown", "mousedown", "mousemove", "wheel", "touchstart", "input", "scroll"]) {
    document.addEventListener(type, () => { lastInput = performance.now(); }, { passive: true, capture: true });
  }
  setInterval(() => {
    const now = performance.now(), dt = Math.min(now - lastTick, 1000);
    lastTick = now;
    if (!state || !state.assignment || state.saved || state.saving) return;
    if (document.visibilityState === "visible" && document.hasFocus() && now - lastInput < ACTIVE_IDLE_MS) {
      state.activeMs = (state.activeMs || 0) + dt;
    }
    itemBox.dataset.activeMs = String(Math.round(state.activeMs || 0));
  }, ACTIVE_TICK_MS);
  const activeMs = () => Math.round((state && state.activeMs) || 0);

  function setStatus(kind, text) {
    statusBox.className = "save-status " + kind;
    statusBox.textContent = text;
  }

  let lastProgress = null;
  function showProgress(p) {
    if (!p) return;
    lastProgress = Object.assign({}, p);
    // The bar is the annotator's own progress (each item at most once). No campaign-wide count: the
    // server sends none (gold items do not move the campaign's counter, so it would tell them apart).
    const bar = $("#progress-bar");
    const mine = p.items_total || 0;
    const pct = mine ? Math.min(100, (100 * p.done) / mine) : 0;
    bar.querySelector("span").style.width = pct.toFixed(1) + "%";
    bar.setAttribute("aria-valuenow", String(p.done));
    bar.setAttribute("aria-valuemax", String(mine));
    bar.dataset.done = String(p.done);
    $("#progress-text").textContent = `You: ${p.done} of up to ${mine} items` + (p.assigned ? ` · ${p.assigned} open` : "");
  }

  // The end of the queue: the bar full and the count honest — what this annotator labelled, and that
  // no item is left for them (the rest have their labels from others); the action buttons are hidden
  // by the .finished class (annotate.css) until Z brings back the previous label.
  function showFinished() {
    const p = lastProgress || { done: 0 };
    const bar = $("#progress-bar");
    bar.querySelector("span").style.width = "100%";
    bar.setAttribute("aria-valuenow", String(p.done));
    bar.setAttribute("aria-valuemax", String(p.done));
    bar.dataset.done = String(p.done);
    $("#progress-text").textContent = `You: ${p.done} labelled · done: no item is left for you`;
  }

  function showFlag() {
    const box = $("#flag-indicator");
    if (state && state.flag) {
      const reason = cfg.flag_reasons.find((r) => r.code === state.flag.reason);
      box.textContent = `⚑ Flagged: ${reason ? reason.label : state.flag.reason} — ${state.flag.note}`;
      box.hidden = false;
    } else {
      box.hidden = true;
      box.textContent = "";
    }
  }

  // ------------------------------------------------------------------ loading items
  // ``handed``: the next item a submit-and-next answer already carried (no request then).
  async function loadNext(withProgress = true, handed = null) {
    if (away) leaveRevision();
    clearTimeout(state && state.timer);
    state = null;
    skipArmed = false;
    setStatus("", "");
    showFlag();
    choicesBox.replaceChildren();
    itemBox.replaceChildren(el("p", { class: "muted", text: "Loading the next item…" }));
    let r = handed;
    loading = !r;
    try {
      if (!r) r = await post(cfg.next, withProgress ? {} : { progress: false });
    } catch (e) {
      loading = false;
      itemBox.replaceChildren(el("p", { class: "error", text: "Could not reach the server. Press Enter to try again." }));
      state = { failedLoad: true };
      return;
    }
    loading = false;
    if (r.status === 401) {
      itemBox.replaceChildren(el("p", { class: "error", text: "Your session ended: log in again, then reload this page." }));
      return;
    }
    if (r.status === 403 && cfg.finished) { location.assign(cfg.finished); return; } // a participant's time or study ended
    if (r.status !== 200 || !r.data) {
      itemBox.replaceChildren(el("p", { class: "error", text: (r.data && r.data.detail) || "Could not load an item. Press Enter to try again." }));
      state = { failedLoad: true };
      return;
    }
    const a = r.data.assignment;
    if (r.data.progress) showProgress(r.data.progress);
    else if (lastProgress) showProgress(Object.assign(lastProgress, { assigned: a ? 1 : 0 }));
    if (!a && cfg.finished) { location.assign(cfg.finished); return; } // a panel participant: on to their code
    work.classList.toggle("finished", !a);
    if (!a) {
      showFinished();
      itemBox.dataset.token = "";
      itemBox.replaceChildren(el("div", { class: "done" },
        el("h2", { text: "Nothing left for you in this campaign." }),
        el("p", {}, "Thank you! ", el("a", { href: cfg.queue, text: "Back to my work" })),
        el("p", { class: "muted" }, "To change your last label, press ", kbd("Z"), ".")));
      return;
    }
    const builder = KINDS[a.kind];
    state = {
      assignment: a, key: uuid4(), flag: null, saving: false, saved: false, closed: false, retries: 0, timer: null,
      visibleMs: 0, visibleSince: document.visibilityState === "visible" ? performance.now() : null, activeMs: 0,
    };
    lastInput = performance.now(); // the item appearing starts its active time
    itemBox.dataset.token = a.token;
    itemBox.replaceChildren();
    state.ctrl = builder(a.content, itemBox, choicesBox);
    setStatus("", "Not saved yet");
    const pending = pendingRead();
    if (pending && pending.token === a.token) {
      // This item's answer was sent before the page went away, unconfirmed: shown again and re-sent.
      const { flag, ...shown } = pending.body.answer || {};
      state.ctrl.restore(shown);
      state.flag = flag || null;
      state.key = pending.body.idempotency_key;
      state.visibleMs = Number(pending.body.time_on_item_ms) || 0;  // the time it took before the page went
      state.activeMs = Number(pending.body.active_ms) || 0;
      showFlag();
      submit();
    } else if (pending) {
      pendingSendAlone(pending);
    }
  }

  // ------------------------------------------------------------------ saving
  // A new label goes to submit-and-next when the page has it (one request per label, issue 30); a change
  // of the previous label, and the panel's page, to their own submit.
  function submitUrl(mine) {
    const url = mine.revising ? cfg.revise : (cfg.submit_next || cfg.submit);
    return url.replace("TOKEN", encodeURIComponent(mine.assignment.token));
  }
  // The next item a submit-and-next answer carried, as a next-item answer; null when it carried none
  // (a plain submit, or the take was refused: then the page asks next-item itself and shows why).
  function handedNext(data) {
    return data && Object.prototype.hasOwnProperty.call(data, "assignment")
      ? { status: 200, data: { assignment: data.assignment, progress: data.progress } } : null;
  }

  // After a saved label: the next item; a participant whose label was their last (the answer says
  // ``finished``: their quota is reached, their study complete) goes to their end page instead, without
  // asking for a next item the study would refuse them (a 403, an error in the browser's console).
  function moveOn(mine) {
    if (mine.finished) { location.assign(cfg.finished); return; }
    loadNext(false, mine.handed);
  }

  async function submit() {
    if (!state) return;
    if (state.failedLoad) return loadNext();
    if (state.revising && (state.saved || state.closed)) return returnToCurrent();
    if (state.saved) return moveOn(state);
    if (state.closed) return loadNext();
    if (state.saving) return;
    const missing = state.ctrl.missing();
    if (missing) { setStatus("error", missing); return; }
    clearTimeout(state.timer);
    const mine = state;
    mine.saving = true;
    setStatus("saving", "Saving…");
    const answer = Object.assign({}, mine.ctrl.answer());
    if (mine.flag) answer.flag = mine.flag;
    let r;
    try {
      const body = { idempotency_key: mine.key, answer, time_on_item_ms: elapsedMs(), active_ms: activeMs() };
      if (!mine.revising) pendingKeep(mine.assignment.token, body);
      r = await post(submitUrl(mine), body);
    } catch (e) {
      r = { status: 0, data: null };
    }
    if (answered(r.status)) pendingDone(mine.assignment.token);
    if (state !== mine) return;
    mine.saving = false;
    if ((r.status === 200 || r.status === 201) && mine.revising) {
      mine.saved = true;
      const d = r.data || {};
      setStatus("saved", d.replayed ? `Saved ✓ as version ${d.version} (already on the server)`
        : d.changed ? `Saved ✓ as version ${d.version}` : "Saved ✓ — the same answer, no new version");
      mine.timer = setTimeout(() => { if (state === mine) returnToCurrent(); }, 700);
      return;
    }
    if (r.status === 200 || r.status === 201) {
      mine.saved = true;
      mine.handed = handedNext(r.data);
      setStatus("saved", r.data && r.data.replayed ? "Saved ✓ (already on the server)" : "Saved ✓");
      if (!mine.handed) showProgress(r.data && r.data.progress);  // else shown with the next item
      mine.finished = Boolean(r.data && r.data.finished && cfg.finished);
      mine.timer = setTimeout(() => { if (state === mine) moveOn(mine); }, 350);
      return;
    }
    if (r.status === 0 || r.status >= 500 || r.status === 429) return scheduleRetry(mine, r);
    if (r.status === 403 && cfg.finished) { location.assign(cfg.finished); return; } // a participant's time or study ended
    if (r.status === 401 || r.status === 403) {
      mine.failed = true;
      setStatus("error", "Not saved: your session ended. Log in again in another tab, then press R to retry.");
      return;
    }
    if (r.status === 409) {
      mine.closed = true;
      setStatus("error", ((r.data && r.data.detail) || "This item can no longer be saved.") +
        (mine.revising ? " Your label was not changed; press Enter to return to the current item." : " Press Enter for the next item."));
      return;
    }
    setStatus("error", "Not saved: " + ((r.data && r.data.detail) || `the server refused the answer (${r.status})`));
  }

  // The site unreachable (0), unavailable (503: its database is away) or busy (429) passes: the answer is
  // re-sent with the same idempotency key until it is stored, however long that takes (the server stores
  // it once). Any other 5xx is a fault that waiting does not mend: a few tries, then R by hand.
  function scheduleRetry(mine, r) {
    mine.retries += 1;
    mine.failed = true;
    const passing = r.status === 0 || r.status === 503 || r.status === 429;
    if (!passing && mine.retries > MAX_AUTO_RETRIES) {
      setStatus("retry", "Not saved — the server cannot be reached. Your answer is kept; press R to retry.");
      return;
    }
    const delay = r.retryAfterMs !== null && r.retryAfterMs !== undefined ? Math.min(30000, r.retryAfterMs)
      : Math.min(passing ? 15000 : 8000, 1000 * 2 ** (mine.retries - 1));
    const why = r.status === 503 ? "the site is temporarily unavailable" : r.status === 0 ? "the server cannot be reached"
      : r.status === 429 ? "the server is busy" : `the server failed (${r.status})`;
    setStatus("retry", `Not saved yet — ${why}. Your answer is kept; retrying in ${Math.round(delay / 1000)} s ` +
      `(attempt ${mine.retries}). Press R to retry now.`);
    mine.timer = setTimeout(() => { if (state === mine && !mine.saved) submit(); }, delay);
  }

  async function skip() {
    if (!state || !state.assignment || state.saved || state.saving) return;
    if (state.revising) { setStatus("error", "A saved label cannot be skipped: change it, or press Esc to return to the current item."); return; }
    if (!skipArmed) {
      skipArmed = true;
      setStatus("error", "Skip this item? Press S again to confirm, Esc to cancel.");
      return;
    }
    skipArmed = false;
    const url = cfg.skip.replace("TOKEN", encodeURIComponent(state.assignment.token));
    let r;
    try { r = await post(url, {}); } catch (e) { r = { status: 0 }; }
    if (r.status === 200) { showProgress(r.data.progress); loadNext(); }
    else setStatus("error", "Could not skip: " + ((r.data && r.data.detail) || "the server cannot be reached") + ".");
  }

  function answerChanged() {
    if (state && !state.saved && !state.closed && !state.saving && statusBox.classList.contains("error")) {
      setStatus("", "Not saved yet");
    }
  }

  // ------------------------------------------------------------------ changing the previous label
  // While the previous item is shown, the current item waits untouched (its nodes, answer, flag and
  // clock are kept aside, the clock paused) and comes back as it was left.
  let away = null; // {state, item, choices, token, status} of the current item
  const banner = $("#revise-banner"), work = $("#work");

  async function openPrevious() {
    if (away) return returnToCurrent();  // Z again: back without changing anything
    if (loading || (state && state.saving)) return;
    // A just-saved item would move on to the next one meanwhile: it does so on return instead.
    if (state && state.saved) clearTimeout(state.timer);
    let r;
    try { r = await get(cfg.previous); } catch (e) { r = { status: 0, data: null }; }
    if (r.status !== 200 || !r.data) {
      setStatus("error", "Could not load your previous label: " + ((r.data && r.data.detail) || "the server cannot be reached") + ".");
      return;
    }
    const p = r.data.previous;
    if (!p) { setStatus("error", "You have no saved label in this campaign yet."); return; }
    if (!p.revisable) { setStatus("error", p.refusal); return; }
    if (away || loading || (state && state.saving)) return;
    const builder = KINDS[p.kind];
    if (state) {
      clearTimeout(state.timer);
      if (state.visibleSince !== null && state.visibleSince !== undefined) {
        state.visibleMs += performance.now() - state.visibleSince;
        state.visibleSince = null;
      }
    }
    away = { state, item: Array.from(itemBox.childNodes), choices: Array.from(choicesBox.childNodes),
             token: itemBox.dataset.token, status: [statusBox.className, statusBox.textContent] };
    skipArmed = false;
    state = {
      assignment: { token: p.token, kind: p.kind, content: p.content }, revising: true, version: p.version,
      key: uuid4(), flag: (p.answer && p.answer.flag) || null, saving: false, saved: false, closed: false, retries: 0,
      timer: null, visibleMs: 0, visibleSince: document.visibilityState === "visible" ? performance.now() : null,
    };
    itemBox.dataset.token = p.token;
    itemBox.replaceChildren();
    choicesBox.replaceChildren();
    state.ctrl = builder(p.content, itemBox, choicesBox);
    state.ctrl.restore(p.answer || {});
    work.classList.add("revising");
    banner.hidden = false;
    banner.replaceChildren(el("strong", { text: "Changing your previous label" }),
      ` (version ${p.version}). `, kbd("Enter"), ` saves it as version ${p.version + 1}; `, kbd("Esc"), " or ", kbd("Z"),
      " returns to the current item without changing it.");
    showFlag();
    setStatus("", `Your saved label (version ${p.version}): change it, then Enter`);
  }

  function leaveRevision() {
    work.classList.remove("revising");
    banner.hidden = true;
    banner.replaceChildren();
    const back = away;
    away = null;
    return back;
  }

  function returnToCurrent() {
    if (!away) return;
    if (state && state.saving) return;
    clearTimeout(state && state.timer);
    const back = leaveRevision();
    const s = back.state;
    if (!s || !s.assignment || s.saved || s.closed || s.failedLoad) { state = null; loadNext(); return; }
    state = s;
    itemBox.replaceChildren(...back.item);
    choicesBox.replaceChildren(...back.choices);
    itemBox.dataset.token = back.token;
    if (document.visibilityState === "visible") state.visibleSince = performance.now();
    showFlag();
    statusBox.className = back.status[0];
    statusBox.textContent = back.status[1];
  }

  // ------------------------------------------------------------------ kinds
  // Each kind builds its item and returns {onKey, missing, answer, restore}; restore(answer) shows a
  // saved answer (the shape the page sends) when the previous label is being changed.
  function choiceButtons(box, keys, onPick) {
    const buttons = {};
    for (const [key, value, label] of keys) {
      buttons[value] = el("button", { type: "button", "data-choice": value, onclick: () => onPick(value) }, kbd(key), label);
      box.appendChild(buttons[value]);
    }
    // Object keys are strings: compare as strings, so a numeric value (the 1–5 score) is highlighted too.
    return (current) => {
      for (const [v, b] of Object.entries(buttons)) b.classList.toggle("on", current !== null && current !== undefined && v === String(current));
    };
  }

  function briefBox(content) {
    if (!content.brief) return null;
    const lines = (content.constraints || []).map((c) => el("li", { text: c }));
    return el("div", { class: "brief" }, el("strong", { text: "Brief: " }), content.brief, lines.length ? el("ul", {}, lines) : null);
  }

  function pairwise(content, box, bar, isImage) {
    let choice = null;
    const sides = {};
    for (const s of ["A", "B"]) {
      if (isImage) {
        sides[s] = el("div", { class: "side image", "data-side": s }, el("h3", {}, `Image ${s}`),
          el("div", { class: "frame" }, el("img", { src: content.images[s], alt: `Image ${s}`, class: content.reference ? "canvas-img" : null })));
      } else {
        sides[s] = el("div", { class: "side", "data-side": s },
          el("h3", {}, `Response ${s}`, el("span", { class: "field", text: content.field_label })),
          el("p", { text: content.sides[s] || "(empty)" }));
      }
    }
    const sideBox = el("div", { class: "sides" }, sides.A, sides.B);
    append(box,
      el("p", { class: "question" }, content.dimension_label ? `${content.dimension_label}: ` : "", content.question),
      content.rule ? el("p", { class: "rule" }, content.rule, " ", content.tie_rule || "") : null,
      briefBox(content),
      // canvas similarity: the reference both canvases were painted towards
      content.reference ? el("div", { class: "reference" }, el("h3", { text: "Reference" }),
        el("div", { class: "frame" }, el("img", { src: content.reference, alt: "Reference image", class: "canvas-img" }))) : null,
      sideBox,
    );
    if (content.checklist && content.checklist.length) {
      box.append(el("div", { class: "cues" }, el("h4", { text: "Reference cues (not a score sheet — do not count items)" }),
        el("ul", {}, content.checklist.map((c) => el("li", { text: c })))));
    }
    const mark = choiceButtons(bar, [["A", "A", "A better"], ["B", "B", "B better"], ["T", "tie", "Tie"]], set);
    function set(value) {
      if (state && state.saving) return;
      choice = value;
      mark(value);
      sides.A.classList.toggle("chosen", value === "A");
      sides.B.classList.toggle("chosen", value === "B");
      sideBox.classList.toggle("tie", value === "tie");
      answerChanged();
    }
    return {
      onKey(key) {
        const v = { a: "A", b: "B", t: "tie" }[key];
        if (v) { set(v); return true; }
        return false;
      },
      missing: () => (choice ? null : "Choose A, B or tie first (keys A, B, T)."),
      answer: () => ({ choice }),
      restore(a) { if (a.choice) set(a.choice); },
    };
  }

  function faithfulness(content, box, bar) {
    let score = null, hardFail = false;
    const reasons = new Set();
    const verdict = el("span", { class: "verdict" });
    const reasonButtons = {};
    const reasonBox = el("div", { class: "reasons off" });
    for (const r of content.hard_fail_reasons) {
      reasonButtons[r.code] = el("button", { type: "button", class: r.typical ? "" : "atypical", "data-reason": r.code,
        title: r.typical ? "" : "Typical of another task family", onclick: () => toggle(r.code) }, kbd(r.key), r.label);
      reasonBox.appendChild(reasonButtons[r.code]);
    }
    append(box,
      el("p", { class: "question", text: content.question }),
      el("div", { class: "faith" },
        el("div", { class: "side image" }, el("div", { class: "frame" }, el("img", { src: content.image, alt: "Rendered image" }))),
        el("div", { class: "plan" }, briefBox(content),
          el("h4", { text: "Core Idea" }), el("p", { text: content.plan.core_idea }),
          el("h4", { text: "Visual Description" }), el("p", { text: content.plan.visual_description }),
          el("h4", {}, "Hard fail ", kbd("H"), " — reasons"), reasonBox,
          el("p", { class: "rule" }, content.pass_rule, " ", verdict))),
    );
    const scoreNames = ["", "lost", "weak", "partial", "faithful", "exact"];
    const mark = choiceButtons(bar, [1, 2, 3, 4, 5].map((n) => [String(n), n, scoreNames[n]]), (n) => setScore(n));
    function refresh() {
      mark(score);
      reasonBox.classList.toggle("off", !hardFail);
      for (const [code, b] of Object.entries(reasonButtons)) b.classList.toggle("on", reasons.has(code));
      if (score === null) verdict.textContent = "";
      else verdict.textContent = score >= 4 && !hardFail ? "→ pass" : "→ fail";
      answerChanged();
    }
    function setScore(n) { if (state && state.saving) return; score = n; refresh(); }
    function toggle(code) {
      if (state && state.saving) return;
      if (reasons.has(code)) reasons.delete(code); else { reasons.add(code); hardFail = true; }
      refresh();
    }
    const keyToReason = Object.fromEntries(content.hard_fail_reasons.map((r) => [r.key.toLowerCase(), r.code]));
    return {
      onKey(key) {
        if (/^[1-5]$/.test(key)) { setScore(Number(key)); return true; }
        if (key === "h") { hardFail = !hardFail; if (!hardFail) reasons.clear(); refresh(); return true; }
        if (keyToReason[key]) { toggle(keyToReason[key]); return true; }
        return false;
      },
      missing: () => {
        if (score === null) return "Give a score from 1 to 5 first.";
        if (hardFail && reasons.size === 0) return "A hard fail needs at least one reason (or press H to cancel it).";
        return null;
      },
      answer: () => ({ score, hard_fail: hardFail, hard_fail_reasons: Array.from(reasons) }),
      restore(a) {
        score = typeof a.score === "number" ? a.score : null;
        reasons.clear();
        (a.hard_fail_reasons || []).forEach((r) => reasons.add(r));
        hardFail = reasons.size > 0 || a.hard_fail === true;
        refresh();
      },
    };
  }

  function tigAudit(content, box, bar) {
    const rows = content.criteria.map((c) => ({ code: c.code }));
    rows.push({ code: "__action" });
    const values = {};
    let action = null, current = 0;
    const trs = [];
    const table = el("table", {});
    content.criteria.forEach((c, i) => {
      const cells = content.codes.map((code, j) => el("td", {}, el("button", { type: "button", "data-code": code.code,
        onclick: () => { current = i; setCode(code.code); } }, kbd(String(j + 1)), code.label)));
      const tr = el("tr", { "data-row": c.code }, el("td", {}, el("strong", { text: c.label }), el("div", { class: "q", text: c.question })), cells);
      trs.push(tr);
      table.appendChild(tr);
    });
    const actionCells = content.actions.map((a, j) => el("td", {}, el("button", { type: "button", "data-action": a.code,
      onclick: () => { current = rows.length - 1; setAction(a.code); } }, kbd(String(j + 1)), a.label)));
    const actionRow = el("tr", { "data-row": "overall_action" }, el("td", {}, el("strong", { text: "Overall action" }),
      el("div", { class: "q", text: content.action_rule })), actionCells, el("td", {}));
    trs.push(actionRow);
    table.appendChild(actionRow);
    const note = el("textarea", { id: "revision-note", rows: 1, maxlength: 2000, placeholder: "Revision note (required for revise)" });
    note.addEventListener("input", answerChanged);
    append(box,
      el("div", { class: "tig-top" },
        el("div", { class: "box" }, el("strong", { text: "Checklist item: " }), content.checklist_text),
        el("div", { class: "box" }, el("strong", { text: "Cluster: " }), content.cluster_summary,
          el("ul", {}, content.provenance.map((p) => el("li", { text: p }))))),
      briefBox(content),
      (content.candidates || []).length ? el("div", { class: "candidates" }, content.candidates.map((c) =>
        el("details", { class: "response-box candidate" }, el("summary", {}, el("strong", { text: c.label }), " — does the item leak from it?"),
          el("h4", { text: "Core Idea" }), el("p", { text: c.core_idea }),
          el("h4", { text: "Visual Description" }), el("p", { text: c.visual_description })))) : null,
      el("div", { class: "grid-rows" }, table),
      el("label", { class: "tig-note" }, el("span", {}, kbd("N"), " Revision note"), note),
    );
    function refresh() {
      trs.forEach((tr, i) => tr.classList.toggle("current", i === current));
      content.criteria.forEach((c, i) => trs[i].querySelectorAll("button").forEach((b) => b.classList.toggle("on", b.dataset.code === values[c.code])));
      actionRow.querySelectorAll("button").forEach((b) => b.classList.toggle("on", b.dataset.action === action));
      answerChanged();
    }
    function setCode(code) {
      if (state && state.saving) return;
      values[content.criteria[current].code] = code;
      current = Math.min(current + 1, rows.length - 1);
      refresh();
    }
    function setAction(code) { if (state && state.saving) return; action = code; refresh(); }
    refresh();
    return {
      onKey(key, event) {
        if (key === "arrowdown") { current = Math.min(current + 1, rows.length - 1); refresh(); return true; }
        if (key === "arrowup") { current = Math.max(current - 1, 0); refresh(); return true; }
        if (key === "n") { event.preventDefault(); note.focus(); return true; }
        if (current < content.criteria.length && /^[1-4]$/.test(key)) { setCode(content.codes[Number(key) - 1].code); return true; }
        if (current === rows.length - 1 && /^[1-3]$/.test(key)) { setAction(content.actions[Number(key) - 1].code); return true; }
        return false;
      },
      missing: () => {
        const open = content.criteria.find((c) => !values[c.code]);
        if (open) return `Mark ${open.label.toLowerCase()} first.`;
        if (!action) return "Choose the overall action (accept, revise, exclude).";
        if (action === "revise" && !note.value.trim()) return "Say what to revise (N opens the note).";
        return null;
      },
      answer: () => ({ criteria: Object.assign({}, values), overall_action: action, revision_note: note.value }),
      restore(a) {
        Object.assign(values, a.criteria || {});
        action = a.overall_action || null;
        note.value = a.revision_note || "";
        refresh();
      },
    };
  }

  function strategy(content, box, bar) {
    const roles = {};
    const cycle = { undefined: "central", central: "incidental", incidental: undefined };
    const trs = {};
    const grid = el("div", { class: "strategy-grid" });
    for (const s of content.strategies) {
      const mark = el("span", { class: "mark" });
      trs[s.code] = { tr: el("div", { class: "strategy", "data-strategy": s.code, onclick: () => turn(s.code) },
        el("div", { class: "strategy-head" }, kbd(s.key), el("strong", { text: " " + s.label }), mark),
        el("div", { class: "q", text: s.definition })), mark };
      grid.appendChild(trs[s.code].tr);
    }
    append(box,
      briefBox(content),
      el("div", { class: "response-box" }, el("h4", { text: "Core Idea" }), el("p", { text: content.core_idea }),
        el("h4", { text: "Visual Description" }), el("p", { text: content.visual_description })),
      el("p", { class: "rule", text: content.central_rule + " A response may have no strategy." }),
      grid,
    );
    function refresh() {
      for (const [code, row] of Object.entries(trs)) {
        row.mark.textContent = roles[code] || "—";
        row.tr.classList.toggle("on", Boolean(roles[code]));
      }
      answerChanged();
    }
    // An empty strategy set is a real answer, but an easy accident: the first Enter asks to confirm it.
    let emptyConfirmed = false;
    function turn(code) { if (state && state.saving) return; roles[code] = cycle[roles[code]]; if (!roles[code]) delete roles[code]; emptyConfirmed = false; refresh(); }
    refresh();
    return {
      onKey(key) {
        const s = content.strategies.find((x) => x.key === key);
        if (s) { turn(s.code); return true; }
        if (key === "0") { for (const k of Object.keys(roles)) delete roles[k]; emptyConfirmed = false; refresh(); return true; }
        return false;
      },
      missing: () => {
        if (Object.keys(roles).length || emptyConfirmed) return null;
        emptyConfirmed = true;
        return "No strategy marked. Press Enter again to save “no strategy”, or mark one first.";
      },
      answer: () => ({ strategies: Object.assign({}, roles) }),
      restore(a) {
        for (const [code, role] of Object.entries(a.strategies || {})) if (role && role !== "absent") roles[code] = role;
        emptyConfirmed = Object.keys(roles).length === 0;  // "no strategy" was confirmed when it was saved
        refresh();
      },
    };
  }

  // C² U-O-S rating: 0–5 for the focused component, Tab/arrows move between components, rubric beside.
  function uosRating(content, box, bar) {
    const scores = {};
    let current = 0;
    const rows = content.components.map((c, i) => {
      const buttons = [0, 1, 2, 3, 4, 5].map((n) => el("button", { type: "button", "data-score": String(n),
        onclick: () => { current = i; setScore(n); } }, kbd(String(n))));
      const levels = el("ol", { class: "rubric-levels", start: "0" },
        c.levels.map((l) => el("li", { "data-level": String(l.level) }, el("strong", { text: `${l.level}: ` }), l.text)));
      const row = el("div", { class: "uos-row", "data-component": c.code, onclick: () => { current = i; refresh(); } },
        el("div", { class: "uos-head" }, el("strong", { text: c.label }), el("span", { class: "uos-scale" }, buttons)),
        el("div", { class: "rubric" }, el("p", { class: "q", text: c.definition }), levels));
      return { code: c.code, row, buttons, levels };
    });
    const text = el("div", { class: "uos-text" },
      el("div", { class: "uos-prompt" }, el("strong", { text: "Prompt: " }), content.prompt),
      content.image ? el("div", { class: "uos-image" }, el("img", { src: content.image, alt: "Image the prompt refers to" })) : null,
      el("div", { class: "response-box" }, el("h4", { text: "Response" }), el("p", { class: "response-text", text: content.response })));
    append(box,
      el("p", { class: "question", text: content.question }),
      el("div", { class: "uos-layout" }, text,
        el("div", { class: "uos-grid" }, rows.map((r) => r.row),
          el("p", { class: "muted small", text: `Rubric ${content.rubric_version} — the same text the automatic rater received.` }))),
    );
    function refresh() {
      rows.forEach((r, i) => {
        r.row.classList.toggle("current", i === current);
        r.buttons.forEach((b) => b.classList.toggle("on", Number(b.dataset.score) === scores[r.code]));
        r.levels.querySelectorAll("li").forEach((li) => li.classList.toggle("on", Number(li.dataset.level) === scores[r.code]));
      });
      answerChanged();
    }
    function setScore(n) {
      if (state && state.saving) return;
      scores[rows[current].code] = n;
      current = Math.min(current + 1, rows.length - 1);
      refresh();
    }
    refresh();
    return {
      onKey(key, event) {
        if (/^[0-5]$/.test(key)) { setScore(Number(key)); return true; }
        const back = (key === "tab" && event.shiftKey) || key === "arrowup" || key === "arrowleft";
        const forward = (key === "tab" && !event.shiftKey) || key === "arrowdown" || key === "arrowright";
        if (back) { current = Math.max(current - 1, 0); refresh(); return true; }
        if (forward) { current = Math.min(current + 1, rows.length - 1); refresh(); return true; }
        return false;
      },
      missing: () => {
        const open = rows.find((r) => scores[r.code] === undefined);
        return open ? `Score ${open.code} from 0 to 5 first (Tab moves between components).` : null;
      },
      answer: () => Object.assign({}, scores),
      restore(a) {
        for (const r of rows) if (typeof a[r.code] === "number") scores[r.code] = a[r.code];
        refresh();
      },
    };
  }

  // EASEL handwriting: type the letters read (the box has the focus; Enter submits) or mark unreadable.
  function handwriting(content, box, bar) {
    let unreadable = false;
    const input = el("input", { type: "text", id: "handwriting-text", maxlength: String(content.max_length),
      autocomplete: "off", spellcheck: "false", "data-enter-submits": "", "aria-label": "Letters you read" });
    const flag = el("button", { type: "button", id: "unreadable-button", onclick: () => toggle() }, kbd("U"), "Unreadable");
    input.addEventListener("input", () => { if (unreadable && input.value) { unreadable = false; refresh(); } answerChanged(); });
    append(box,
      el("p", { class: "question", text: content.question }),
      el("div", { class: "faith" },
        el("div", { class: "side image" }, el("div", { class: "frame" }, el("img", { src: content.image, alt: "Handwriting canvas", class: "canvas-img" }))),
        el("div", { class: "plan" }, el("label", {}, el("span", {}, "Letters (at most ", String(content.max_length), ")"), input),
          el("p", {}, flag), el("p", { class: "muted small" }, kbd("Esc"), " leaves the box, ", kbd("W"), " returns to it."))),
    );
    bar.appendChild(el("span", { class: "muted small", text: "Enter submits" }));
    function refresh() {
      flag.classList.toggle("on", unreadable);
      input.disabled = unreadable;
      answerChanged();
    }
    function toggle() {
      if (state && state.saving) return;
      unreadable = !unreadable;
      if (unreadable) input.value = "";
      refresh();
      if (!unreadable) input.focus();
    }
    setTimeout(() => input.focus(), 0);
    return {
      onKey(key, event) {
        if (key === "u") { toggle(); return true; }
        if (key === "w") { event.preventDefault(); input.disabled = false; unreadable = false; refresh(); input.focus(); return true; }
        return false;
      },
      missing: () => (unreadable || input.value.trim() ? null : "Type the letters you read, or mark the canvas unreadable (Esc, then U)."),
      answer: () => (unreadable ? { unreadable: true, text: "" } : { unreadable: false, text: input.value }),
      restore(a) {
        unreadable = a.unreadable === true;
        input.value = unreadable ? "" : (a.text || "");
        refresh();
      },
    };
  }

  const KINDS = {
    uos_rating: uosRating,
    canvas_similarity: (c, box, bar) => pairwise(c, box, bar, true),
    handwriting,
    text_pairwise: (c, box, bar) => pairwise(c, box, bar, false),
    image_preference: (c, box, bar) => pairwise(c, box, bar, true),
    faithfulness,
    tig_audit: tigAudit,
    strategy,
  };

  // ------------------------------------------------------------------ overlays and the flag dialog
  let flagReason = null;
  const flagList = $("#flag-reasons");
  cfg.flag_reasons.forEach((r, i) => {
    flagList.appendChild(el("li", { "data-reason": r.code, onclick: () => pickReason(r.code) }, kbd(String(i + 1)), " ", r.label));
  });
  function pickReason(code) {
    flagReason = code;
    flagList.querySelectorAll("li").forEach((li) => li.classList.toggle("on", li.dataset.reason === code));
    $("#flag-note").focus();
  }
  function openOverlay(name) {
    document.querySelectorAll(".overlay").forEach((o) => { o.hidden = o.id !== `overlay-${name}`; });
    if (name === "flag") {
      $("#flag-error").textContent = "";
      flagReason = state && state.flag ? state.flag.reason : null;
      $("#flag-note").value = state && state.flag ? state.flag.note : "";
      flagList.querySelectorAll("li").forEach((li) => li.classList.toggle("on", li.dataset.reason === flagReason));
    }
    // The focus goes into the panel, so a screen reader announces the dialog (it stayed on the page behind,
    // and the panel opened unannounced); the keys work as before (the card is not a text box).
    const card = document.querySelector(`#overlay-${name} .overlay-card`);
    if (card) { card.tabIndex = -1; card.focus(); }
  }
  function closeOverlays() {
    document.querySelectorAll(".overlay").forEach((o) => { o.hidden = true; });
    if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
  }
  const openOverlayName = () => { const o = document.querySelector(".overlay:not([hidden])"); return o ? o.id.replace("overlay-", "") : null; };
  function saveFlag() {
    const note = $("#flag-note").value.trim();
    if (!flagReason) { $("#flag-error").textContent = "Pick a reason (press its number)."; return; }
    if (!note) { $("#flag-error").textContent = "A flag needs a short note."; $("#flag-note").focus(); return; }
    if (state && state.assignment) { state.flag = { reason: flagReason, note }; showFlag(); answerChanged(); }
    closeOverlays();
  }
  $("#flag-save").addEventListener("click", saveFlag);
  $("#flag-remove").addEventListener("click", () => { if (state) { state.flag = null; showFlag(); } closeOverlays(); });
  document.querySelectorAll("[data-open]").forEach((b) => b.addEventListener("click", () => openOverlay(b.dataset.open)));
  document.querySelectorAll(".overlay").forEach((o) => o.addEventListener("click", (e) => { if (e.target === o) closeOverlays(); }));
  $("#submit-button").addEventListener("click", submit);
  $("#skip-button").addEventListener("click", skip);
  $("#previous-button").addEventListener("click", openPrevious);
  $("#flag-button").addEventListener("click", () => { if (state && state.assignment && !state.saved) openOverlay("flag"); });

  // ------------------------------------------------------------------ keyboard
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key.toLowerCase();
    const typing = ["TEXTAREA", "INPUT", "SELECT"].includes((event.target && event.target.tagName) || "");
    const overlay = openOverlayName();
    if (key === "escape") {
      skipArmed = false;
      // Changing the previous label, Esc returns at once, as the banner says, even from a text box (the
      // handwriting reading box has the focus); otherwise it leaves the box or closes the panel.
      if (overlay) closeOverlays();
      else if (away) { if (typing) event.target.blur(); returnToCurrent(); }
      else if (typing) closeOverlays(); else answerChanged();
      event.preventDefault();
      return;
    }
    if (overlay === "flag") {
      if (key === "enter" && !event.shiftKey) { event.preventDefault(); saveFlag(); return; }
      if (!typing && /^[1-9]$/.test(key) && cfg.flag_reasons[Number(key) - 1]) {
        event.preventDefault(); pickReason(cfg.flag_reasons[Number(key) - 1].code);
      }
      return;
    }
    if (typing && key === "enter" && !overlay && event.target.dataset.enterSubmits !== undefined) {
      event.preventDefault(); submit(); return;  // handwriting: Enter in the reading box submits
    }
    // Enter in a note field behaves the same in every kind: it leaves the note and submits the item
    // (Shift+Enter starts a new line); in the flag panel it saves the flag (above).
    if (typing && key === "enter" && !event.shiftKey && event.target.tagName === "TEXTAREA") {
      event.preventDefault(); event.target.blur(); submit(); return;
    }
    if (typing) return;
    if (overlay) {
      if (key === "?" || key === "i" || key === "c") { event.preventDefault(); closeOverlays(); }
      return;
    }
    if (key === "?") { openOverlay("help"); event.preventDefault(); return; }
    if (key === "i") { openOverlay("instructions"); event.preventDefault(); return; }
    if (key === "c") { openOverlay("calibration"); event.preventDefault(); return; }
    if (key === "enter") { event.preventDefault(); submit(); return; }
    // R retries a failed save only (as the keys help says): it is no second Enter, which a slip from T or E
    // would press on an item not yet answered as meant.
    if (key === "r") { if (state && state.failed && !state.saved && !state.saving && state.assignment) { state.retries = 0; submit(); } return; }
    if (key === "s") { skip(); event.preventDefault(); return; }
    if (key === "z") { event.preventDefault(); openPrevious(); return; }
    skipArmed = false;
    if (!state || !state.ctrl || state.saved || state.closed) return;
    if (key === "f") { event.preventDefault(); openOverlay("flag"); return; }
    if (state.ctrl.onKey(key, event)) event.preventDefault();
  });

  loadNext();
})();
