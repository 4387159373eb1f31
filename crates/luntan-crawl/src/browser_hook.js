// Installed in every document luntan's browser loads, before the page's own
// scripts (browser.rs: `hook`). It tells `Renderer::settle` what the page
// has yet to do: the requests its scripts started and whose answers they
// have not handled, the timers and frames due within the site's settle-ms
// (HORIZON_MS, put in by browser.rs), the observers it has watching, and
// whether it runs anything whose work cannot be foreseen from here
// (workers, event streams, short intervals, animations); and it stands in
// for WebSocket, whose traffic luntan carries. The page's own behaviour is
// unchanged: every wrapper calls the original and returns what it returns,
// and the WebSocket stand-in keeps the original's API.
(function () {
  if (window.__luntan) return;
  var horizon = HORIZON_MS;
  var L = (window.__luntan = { pending: 0, due: 0, loops: 0, opaque: 0, loads: 0, mutations: 0 });
  // The originals, so that luntan's own turns are not counted as the page's.
  var setT = window.setTimeout, clearT = window.clearTimeout;
  var setI = window.setInterval, clearI = window.clearInterval;

  // A request's answer counts until a timer task after `loadend`: its
  // handler has run by then, and a handler that asks again has raised the
  // count first.
  // A probe waiting for an answer to be handled is woken by it.
  var wake = null;
  var answered = function () { setT(function () { L.pending--; if (wake) wake(); }, 0); };
  var send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function () {
    L.pending++;
    try { this.addEventListener("loadend", answered); return send.apply(this, arguments); }
    catch (e) { L.pending--; throw e; }
  };
  if (window.fetch) {
    var f = window.fetch;
    window.fetch = function () {
      L.pending++;
      try { return f.apply(this, arguments).then(function (r) { answered(); return r; }, function (e) { answered(); throw e; }); }
      catch (e) { L.pending--; throw e; }
    };
  }

  // Timers and frames due within the horizon: what a wait of settle-ms
  // would see happen. Later timers are left out, as that wait leaves them.
  // A timer is kept with the time it is due, so that the probe can wait
  // for the soonest instead of being asked again until it has run.
  var timers = new Map(), loops = new Set(), frames = new Set(), idles = new Set();
  var forget = function (id) {
    if (timers.delete(id)) L.due--;
    if (loops.delete(id)) L.loops--;
  };
  window.setTimeout = function (fn, ms) {
    if (typeof fn !== "function" || !((Number(ms) || 0) <= horizon)) return setT.apply(window, arguments);
    var args = Array.prototype.slice.call(arguments, 2), id;
    id = setT.call(window, function () { forget(id); fn.apply(window, args); }, ms);
    timers.set(id, performance.now() + (Number(ms) || 0)); L.due++;
    return id;
  };
  window.setInterval = function (fn, ms) {
    var id = setI.apply(window, arguments);
    // A loop this short never lets a page look still; the wait falls back
    // to settle-ms of quiet for as long as it runs.
    if ((Number(ms) || 0) <= horizon) { loops.add(id); L.loops++; }
    return id;
  };
  window.clearTimeout = function (id) { forget(id); return clearT.apply(window, arguments); };
  window.clearInterval = function (id) { forget(id); return clearI.apply(window, arguments); };
  var frame = function (request, cancel, held) {
    return [function (fn) {
      var id = request.call(window, function (t) { if (held.delete(id)) L.due--; fn(t); });
      held.add(id); L.due++;
      return id;
    }, function (id) { if (held.delete(id)) L.due--; return cancel.call(window, id); }];
  };
  var requestFrame = window.requestAnimationFrame;
  var raf = frame(requestFrame, window.cancelAnimationFrame, frames);
  window.requestAnimationFrame = raf[0]; window.cancelAnimationFrame = raf[1];
  if (window.requestIdleCallback) {
    var ric = frame(window.requestIdleCallback, window.cancelIdleCallback, idles);
    window.requestIdleCallback = ric[0]; window.cancelIdleCallback = ric[1];
  }

  // Observers told of what a frame drew (intersections, sizes): while one
  // watches anything, the probe waits for frames.
  var watching = new WeakMap();
  L.observing = 0;
  var IO = window.IntersectionObserver, ioObserve = IO && IO.prototype.observe;
  ["IntersectionObserver", "ResizeObserver"].forEach(function (name) {
    var C = window[name];
    if (typeof C !== "function") return;
    var observe = C.prototype.observe, unobserve = C.prototype.unobserve, disconnect = C.prototype.disconnect;
    var count = function (o, n) { var was = watching.get(o) || 0; if (was + n < 0) n = -was; watching.set(o, was + n); L.observing += n; };
    C.prototype.observe = function () { count(this, 1); return observe.apply(this, arguments); };
    C.prototype.unobserve = function () { count(this, -1); return unobserve.apply(this, arguments); };
    C.prototype.disconnect = function () { count(this, -(watching.get(this) || 0)); return disconnect.apply(this, arguments); };
  });

  // WebSockets, carried by luntan (browser/socket.rs): Chromium cannot open
  // one from a document luntan answered, and a socket of its own would be
  // outside the site's politeness. The stand-in has WebSocket's API; each
  // call is a message to luntan through the `__luntanSocket` binding, and
  // luntan answers through `L.socket` (below). Counted like requests: the
  // handshake until its open (or error) is handled, each frame sent until
  // luntan has sent it (its answer, if one comes, luntan counts itself). An
  // open socket waiting for news counts for nothing, like a let-go
  // long-poll. Without the binding (a document not luntan's), the original.
  var NativeSocket = window.WebSocket, sockets = new Map(), lastSocket = 0;
  var carry = function (m) { window.__luntanSocket(JSON.stringify(m)); };
  var carried = function () { return typeof window.__luntanSocket === "function"; };
  var bytesToBase64 = function (buf) {
    var b = new Uint8Array(buf), s = "";
    for (var i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
    return btoa(s);
  };
  var Socket = function (url, protocols) {
    if (!(this instanceof Socket)) throw new TypeError("Failed to construct 'WebSocket': Please use the 'new' operator.");
    if (!carried()) return Reflect.construct(NativeSocket, arguments);
    var u;
    try { u = new URL(String(url), location.href); } catch (e) { throw new DOMException("Failed to construct 'WebSocket': The URL '" + url + "' is invalid.", "SyntaxError"); }
    if (u.protocol === "http:") u.protocol = "ws:"; else if (u.protocol === "https:") u.protocol = "wss:";
    if (u.protocol !== "ws:" && u.protocol !== "wss:") throw new DOMException("Failed to construct 'WebSocket': The URL's scheme must be either 'http', 'https', 'ws', or 'wss'.", "SyntaxError");
    if (u.hash) throw new DOMException("Failed to construct 'WebSocket': The URL contains a fragment identifier.", "SyntaxError");
    // An EventTarget of the page's class: listeners, `once` and
    // `handleEvent` behave as the browser's own.
    var target = Reflect.construct(EventTarget, [], new.target || Socket);
    target._id = ++lastSocket; target._on = {}; target._opening = true; target._unsent = 0; target._chain = null;
    target.url = u.href; target.readyState = 0; target.protocol = ""; target.extensions = "";
    target.binaryType = "blob"; target.bufferedAmount = 0;
    sockets.set(target._id, target);
    L.pending++;
    carry({ op: "open", id: target._id, url: target.url, protocols: protocols === undefined ? [] : [].concat(protocols).map(String) });
    return target;
  };
  Socket.prototype = Object.create(EventTarget.prototype, { constructor: { value: Socket, writable: true, configurable: true } });
  Object.setPrototypeOf(Socket, EventTarget);
  ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (name, i) {
    Object.defineProperty(Socket, name, { value: i, enumerable: true });
    Object.defineProperty(Socket.prototype, name, { value: i, enumerable: true });
  });
  ["open", "message", "error", "close"].forEach(function (type) {
    Object.defineProperty(Socket.prototype, "on" + type, {
      configurable: true, enumerable: true,
      get: function () { return (this._on[type] && this._on[type].fn) || null; },
      set: function (fn) {
        var was = this._on[type], self = this;
        if (typeof fn !== "function") { if (was) this.removeEventListener(type, was.call); this._on[type] = null; return; }
        // A handler set again keeps its place among the listeners.
        if (was) { was.fn = fn; return; }
        var h = (this._on[type] = { fn: fn, call: function (e) { return h.fn.call(self, e); } });
        this.addEventListener(type, h.call);
      },
    });
  });
  Socket.prototype.send = function (data) {
    if (this.readyState === 0) throw new DOMException("Failed to execute 'send' on 'WebSocket': Still in CONNECTING state.", "InvalidStateError");
    if (this.readyState !== 1) return;
    var self = this, m = { op: "send", id: this._id };
    // A frame whose Blob was read after close() is dropped; the close
    // event releases its count with the others'.
    var go = function (frame) { if (self.readyState === 1) carry(frame); };
    var size;
    if (typeof data === "string" || !(data instanceof Blob || data instanceof ArrayBuffer || ArrayBuffer.isView(data))) {
      m.text = String(data); size = new TextEncoder().encode(m.text).length;
    } else if (data instanceof Blob) {
      size = data.size;
    } else {
      var view = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
      m.binary = bytesToBase64(view); size = view.length;
    }
    this.bufferedAmount += size; m.size = size;
    this._unsent++; L.pending++;
    // Frames leave in the order sent; a Blob's bytes are read first.
    if (data instanceof Blob) {
      this._chain = (this._chain || Promise.resolve()).then(function () { return data.arrayBuffer(); }).then(function (b) { m.binary = bytesToBase64(b); go(m); });
    } else if (this._chain) {
      this._chain = this._chain.then(function () { go(m); });
    } else {
      go(m);
    }
  };
  Socket.prototype.close = function (code, reason) {
    if (code !== undefined && code !== 1000 && !(code >= 3000 && code <= 4999)) {
      throw new DOMException("Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. " + code + " is neither.", "InvalidAccessError");
    }
    reason = reason === undefined ? "" : String(reason);
    if (new TextEncoder().encode(reason).length > 123) throw new DOMException("Failed to execute 'close' on 'WebSocket': The close reason must not be greater than 123 UTF-8 bytes.", "SyntaxError");
    if (this.readyState >= 2) return;
    this.readyState = 2;
    carry({ op: "close", id: this._id, code: code === undefined ? 1000 : code, reason: reason });
  };
  // luntan's word on socket `id`: "open" (protocol), "sent" (bytes),
  // "message" (data, whether it is base64 of binary), "error", "close"
  // (code, reason, clean). Listeners' exceptions are reported, not thrown
  // back at luntan.
  L.socket = function (id, what, a, b, c) {
    var s = sockets.get(id);
    if (!s) return;
    if (s._opening) { s._opening = false; answered(); }
    if (what === "open") {
      // Closed while it connected: luntan closes it at once.
      if (s.readyState !== 0) return;
      s.readyState = 1; s.protocol = a || "";
      s.dispatchEvent(new Event("open"));
    } else if (what === "sent") {
      s.bufferedAmount = Math.max(0, s.bufferedAmount - a); s._unsent--; answered();
    } else if (what === "message") {
      var data = a;
      if (b) {
        var bin = atob(a), bytes = new Uint8Array(bin.length);
        for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        data = s.binaryType === "arraybuffer" ? bytes.buffer : new Blob([bytes]);
      }
      s.dispatchEvent(new MessageEvent("message", { data: data, origin: new URL(s.url).origin }));
    } else if (what === "error") {
      s.dispatchEvent(new Event("error"));
    } else if (what === "close") {
      for (; s._unsent > 0; s._unsent--) answered();
      s.readyState = 3; sockets.delete(id);
      s.dispatchEvent(new CloseEvent("close", { code: a, reason: b || "", wasClean: !!c }));
    }
  };
  if (typeof NativeSocket === "function") window.WebSocket = Socket;

  // Work that runs elsewhere or on the server's time.
  ["Worker", "SharedWorker", "EventSource"].forEach(function (name) {
    var C = window[name];
    if (typeof C !== "function") return;
    window[name] = new Proxy(C, { construct: function (t, a, nt) { L.opaque = 1; return Reflect.construct(t, a, nt); } });
  });

  // The DOM's changes, and the elements inserted that load something:
  // their requests reach luntan a moment after the insertion, by another
  // channel than the script's.
  var loads = function (el) {
    var tag = el.tagName;
    return (tag === "SCRIPT" && el.hasAttribute("src")) || tag === "IFRAME" ||
      (tag === "LINK" && el.hasAttribute("href") && /(^|\s)stylesheet(\s|$)/i.test(el.getAttribute("rel") || ""));
  };
  var watch = function (el) {
    L.loads++;
    var end = function () { el.removeEventListener("load", end); el.removeEventListener("error", end); L.loads--; };
    el.addEventListener("load", end); el.addEventListener("error", end);
  };
  var inserted = function (node) {
    if (node.nodeType !== 1) return;
    if (loads(node)) watch(node);
    Array.prototype.forEach.call(node.querySelectorAll("script[src], iframe, link[href]"), function (el) { if (loads(el)) watch(el); });
  };
  new MutationObserver(function (records) {
    L.mutations += records.length;
    // Elements the parser inserts while the document loads are waited for
    // by the load itself; only those scripts insert later are watched.
    if (document.readyState !== "complete") return;
    records.forEach(function (r) { Array.prototype.forEach.call(r.addedNodes, inserted); });
  }).observe(document, { childList: true, subtree: true, attributes: true, characterData: true });

  // What settle reads once what the page had queued has run: after a
  // timer task, and first, when something waits for one, after
  // - the next answer handled, when a request of the page's is unhandled
  //   (its answer may be on its way in), or 20 ms; once it is, the page is
  //   looked at afresh, since its handler may have set a frame, an
  //   observer or a timer going (read at once instead, 6 discovers in 32
  //   read a timeline whose handler had just watched its end again);
  // - a frame, when a frame callback is due, an observer watches, or the
  //   window scrolled since the last frame the probe saw (scroll events
  //   fire in the frame, observers in a task just after it); a page that
  //   draws no frame is read after 100 ms (hidden) or a second instead;
  // - the soonest timer due within the horizon, so that a page waiting on
  //   one is asked once, not again and again until it has run.
  // A frame is waited for only then: drawing one costs the renderer and the
  // browser more than the page's own work between two events.
  // [unhandled requests, timers and frames due, 1 when nothing else can be
  // foreseen to move (frames have scripts of their own this one cannot
  // see), 1 when the DOM did not change meanwhile].
  var drawnAt = [0, 0];
  L.probe = function () {
    var before = L.mutations;
    return new Promise(function (resolve) {
      var read = function () {
        if (!resolve) return;
        wake = null;
        var animated = document.getAnimations ? document.getAnimations().some(function (a) { return a.playState === "running"; }) : false;
        var foreseen = !L.loops && !L.opaque && !L.loads && !animated && !document.querySelector("iframe, frame") ? 1 : 0;
        resolve([L.pending, L.due, foreseen, L.mutations === before ? 1 : 0]);
        resolve = null;
      };
      // The 20 ms read is for an answer not yet in. The answer's own timer
      // task lowers the count and queues a look; on a busy machine the
      // 20 ms timer, due by then, ran between the two: read then, a page
      // whose handler had just set an observer watching its end looked
      // still, and a thread was saved without the replies that observer
      // asks for (4 in 32 runs beside three others). Finding the answer
      // handled, that read looks instead; `again` keeps the looks queued
      // to one.
      var unanswered = null, again = false;
      var lookAgain = function () { if (!again) { again = true; setT(look, 0); } };
      var look = function () {
        if (!resolve) return;
        again = false;
        if (L.pending > 0) {
          wake = function () { wake = null; lookAgain(); };
          if (unanswered === null) unanswered = setT(function () { unanswered = null; if (L.pending > 0) read(); else lookAgain(); }, 20);
          return;
        }
        if (unanswered !== null) { clearT(unanswered); unanswered = null; }
        var scrolled = window.scrollX !== drawnAt[0] || window.scrollY !== drawnAt[1];
        if (frames.size || idles.size || L.observing || scrolled) {
          var drawn = function () { drawnAt = [window.scrollX, window.scrollY]; setT(read, 0); };
          if (L.observing && IO) {
            // An intersection observer is told in a task queued after the
            // frame that saw the change, not in the frame, so a timer task
            // set in the frame may run first (with the IntersectionObserver
            // fixture, 5 discovers in 16 read a timeline before it asked for
            // more). One task tells every observer of the document, so an
            // observer of the probe's own is told with the page's.
            var o = new IO(function () { o.disconnect(); drawn(); });
            ioObserve.call(o, document.documentElement);
          } else {
            requestFrame.call(window, drawn);
          }
          // A hidden page draws no frame and is read after 100 ms. A visible
          // one is waited for up to a second: on a loaded machine its frame
          // and the observers' task after it came later than 100 ms, and a
          // thread whose replies an observer asks for was read without them.
          setT(read, document.visibilityState === "hidden" ? 100 : 1000);
          return;
        }
        var soonest = Infinity;
        timers.forEach(function (due) { soonest = Math.min(soonest, due); });
        // A timer runs no earlier than it is due; the one set here for the
        // same moment runs after the page's, set before it.
        var wait = soonest === Infinity ? 0 : Math.max(0, Math.ceil(soonest - performance.now()));
        setT(function () { setT(read, 0); }, wait);
      };
      look();
    });
  };
})();
