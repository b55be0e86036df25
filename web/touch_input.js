// Phones and tablets: touches, the on-screen keyboard, and what kind of screen this is.
//
// Touches. The GLFW port of Emscripten 3.1.6 passes no touch moves (and presses at a stale
// position), so every touch on the canvas is taken here, before GLFW's own listeners, and handed
// to the app (Module._attnlab_touch), whose UiHost turns it into ImGui's mouse
// (src/platform/touch_gestures.h: a tap clicks, a drag on a slider drags it, a swipe scrolls, a
// long press shows what a hover shows, two fingers pinch the map's zoom over the attention map
// and the UI scale elsewhere). The browser's own
// scrolling and zooming are off on the canvas (touch-action: none in index.html), so the canvas
// is never magnified and blurred: a pinch changes the UI scale, drawn sharp at its backing size.
//
// The on-screen keyboard. A phone opens its keyboard only for a focused text element, so when an
// ImGui text field becomes active after a touch, a hidden <textarea> at the field's cursor takes
// the focus, and what is typed into it goes to ImGui: committed text as characters, an IME's
// composition as it changes (backspaces and characters), Backspace, Enter and the arrows as keys,
// a paste as characters. Closing the keyboard (the element's blur) ends the field's edit and
// keeps the text. With a mouse and a real keyboard nothing changes: GLFW reads the keys as before.
//
// The screen. device() says which size class the page is in and the UI scale that suits it
// (window.attnlab.status().device); the app starts at that scale, and its panels stack on a
// narrow screen by the room they have (src/app/panels/pane_layout.h).
"use strict";
(function () {
  const canvas = document.getElementById("canvas");
  const app = () => window.Module && typeof window.Module._attnlab_touch === "function" ? window.Module : null;
  let usingTouch = false;  // the last pointer was a finger: text fields then get the DOM element

  // --- touches ---------------------------------------------------------------------------------
  const PHASE = { touchstart: 0, touchmove: 1, touchend: 2, touchcancel: 3 };
  function onTouch(event) {
    const M = app();
    if (event.target !== canvas || !M) return;
    event.preventDefault();   // no scrolling or zooming by the browser, and no emulated mouse events
    event.stopPropagation();  // GLFW's listeners on the canvas would press at a stale position
    usingTouch = true;
    const rect = canvas.getBoundingClientRect(), now = performance.now();
    for (const t of event.changedTouches) M._attnlab_touch(PHASE[event.type], t.identifier, t.clientX - rect.left, t.clientY - rect.top, now);
    // iOS opens the keyboard only for a focus() inside the touch's own handler: the press (at
    // touchstart) has activated the field in a frame since, if the finger rested for one.
    if (event.type === "touchend" && M._attnlab_text_wanted()) focusField();
  }
  for (const type of Object.keys(PHASE)) window.addEventListener(type, onTouch, { capture: true, passive: false });
  // Safari's own pinch events: the page does its pinch itself.
  for (const type of ["gesturestart", "gesturechange"]) document.addEventListener(type, (e) => e.preventDefault());
  // A real mouse (touches make none: their default is prevented above).
  window.addEventListener("mousedown", () => { usingTouch = false; }, true);

  // --- the on-screen keyboard ------------------------------------------------------------------
  // The element always holds one space before the caret, so that a Backspace on an "empty" field
  // still arrives as an edit (Android keyboards send no usable key code for it).
  const SENTINEL = " ";
  const field = document.createElement("textarea");
  field.id = "text-input";
  field.setAttribute("aria-label", "Text for the active AttnLab field");
  for (const [k, v] of [["autocapitalize", "off"], ["autocomplete", "off"], ["autocorrect", "off"], ["spellcheck", "false"]]) field.setAttribute(k, v);
  // Invisible but focusable; 16 px so that iOS does not zoom in on focus.
  field.style.cssText = "position: fixed; left: 0; top: 0; width: 2em; height: 1.5em; padding: 0; border: 0; margin: 0; " +
                        "font-size: 16px; opacity: 0; resize: none; overflow: hidden; caret-color: transparent; " +
                        "pointer-events: none; z-index: -1; white-space: pre;";
  document.body.appendChild(field);

  let composing = false, composed = "";  // the IME's text sent so far for the composition under way
  let blurringOnPurpose = false;
  function reset() { field.value = SENTINEL; field.setSelectionRange(SENTINEL.length, SENTINEL.length); }
  reset();

  function sendText(text) { if (text && app()) app().ccall("attnlab_text_chars", null, ["string"], [text.replace(/\r\n?/g, "\n")]); }
  const GLFW_MOD_SHIFT = 1, GLFW_MOD_CONTROL = 2;
  function sendKey(key, mods) { if (app()) app()._attnlab_text_key(key, mods || 0); }

  // The composition now reads `now`: take back what was sent and no longer stands, send the rest.
  function followComposition(now) {
    const was = Array.from(composed), is = Array.from(now);
    let same = 0;
    while (same < was.length && same < is.length && was[same] === is[same]) same++;
    for (let i = same; i < was.length; i++) sendKey(GLFW_KEYS.Backspace, 0);
    sendText(is.slice(same).join(""));
    composed = now;
  }
  const typed = () => field.value.startsWith(SENTINEL) ? field.value.slice(SENTINEL.length) : field.value;

  field.addEventListener("compositionstart", () => { composing = true; composed = ""; });
  field.addEventListener("compositionupdate", (e) => followComposition(e.data || ""));
  field.addEventListener("compositionend", (e) => {
    followComposition(e.data || "");
    composing = false;
    composed = "";
    reset();  // Firefox's input event after compositionend then finds nothing new
  });
  field.addEventListener("input", () => {
    if (composing) { followComposition(typed()); return; }
    if (field.value === "") {
      sendKey(GLFW_KEYS.Backspace, 0);  // the sentinel went: a Backspace
    } else {
      sendText(typed());
    }
    reset();
  });
  field.addEventListener("paste", (e) => {
    e.preventDefault();
    e.stopPropagation();  // the page's own paste listener (the app's clipboard) is for GLFW's keys
    sendText(e.clipboardData ? e.clipboardData.getData("text") : "");
  });
  field.addEventListener("blur", () => {
    // The keyboard was closed, or the reader went elsewhere: the field's edit ends, kept.
    if (!blurringOnPurpose && app()) app()._attnlab_text_blur();
  });

  // GLFW key codes of the keys ImGui's text fields use.
  const GLFW_KEYS = { Tab: 258, Enter: 257, Escape: 256, Backspace: 259, Delete: 261, ArrowRight: 262, ArrowLeft: 263,
                      ArrowDown: 264, ArrowUp: 265, PageUp: 266, PageDown: 267, Home: 268, End: 269 };
  // Keys aimed at the element are ours alone: GLFW listens on the window (capture), after us.
  function onKey(e) {
    if (e.target !== field) return;
    e.stopImmediatePropagation();
    if (e.type !== "keydown" || composing || e.isComposing || e.keyCode === 229) return;  // the IME's
    const mods = (e.ctrlKey || e.metaKey ? GLFW_MOD_CONTROL : 0) | (e.shiftKey ? GLFW_MOD_SHIFT : 0);
    if (GLFW_KEYS[e.key] !== undefined) {
      e.preventDefault();
      sendKey(GLFW_KEYS[e.key], mods);
    } else if (mods & GLFW_MOD_CONTROL && /^[acxyz]$/i.test(e.key)) {
      e.preventDefault();  // select all, copy, cut, redo, undo: ImGui's (Ctrl+V arrives as a paste)
      sendKey(e.key.toUpperCase().charCodeAt(0), mods);
    }
  }
  for (const type of ["keydown", "keypress", "keyup"]) window.addEventListener(type, onKey, true);

  function focusField() {
    if (document.activeElement !== field) field.focus({ preventScroll: true });
  }

  // --- the screen --------------------------------------------------------------------------------
  // phone: a touch screen whose shorter side is under 600 CSS px (390 x 844 either way round);
  // tablet: one whose shorter side is under 1100 (768 x 1024, an iPad Pro); desktop: the rest,
  // a short or narrow window with a mouse too (its text is not for fingers). The default UI
  // scale gives fingers larger targets; the reader's choice under View still wins.
  function sizeClass() {
    const shorter = Math.min(window.innerWidth, window.innerHeight);
    const coarse = window.matchMedia && matchMedia("(pointer: coarse)").matches;
    return !coarse ? "desktop" : shorter < 600 ? "phone" : shorter < 1100 ? "tablet" : "desktop";
  }
  const DEFAULT_UI_SCALE = { phone: 1.25, tablet: 1.25, desktop: 1.0 };

  window.attnlabTouch = {
    // From the app after a frame: a text field became active (at x, y: its cursor, CSS px) or not.
    textInputWanted(wanted, x, y, line) {
      if (wanted) {
        field.style.left = `${Math.max(0, x)}px`;
        field.style.top = `${Math.max(0, y)}px`;
        field.style.height = `${Math.max(16, line * 1.5)}px`;
        if (usingTouch) focusField();
      } else if (document.activeElement === field) {
        blurringOnPurpose = true;
        field.blur();  // the keyboard closes
        blurringOnPurpose = false;
        reset();
      }
    },
    textInputFocused: () => document.activeElement === field,
    // Read by the app every frame (it follows it until the reader picks a scale): kept cheap.
    defaultUiScale: () => DEFAULT_UI_SCALE[sizeClass()],
    device() {
      const size = sizeClass();
      return { size_class: size, default_ui_scale: DEFAULT_UI_SCALE[size], viewport: { width: innerWidth, height: innerHeight },
               touch_screen: navigator.maxTouchPoints > 0,
               memory: window.attnlabModelFetch && window.attnlabModelFetch.memory ? window.attnlabModelFetch.memory() : null };
    },
  };
})();
