// Installed in every document luntan's browser loads, before the page's own
// scripts (browser.rs: `hook`). It tells `Renderer::settle` what the page
// has yet to do: the requests its scripts started and whose answers they
// have not handled, the timers and frames due within the site's settle-ms
// (HORIZON_MS, put in by browser.rs), the observers it has watching, and
// whether it runs anything whose work cannot be foreseen from here
// (workers, sockets, short intervals, animations). The page's own behaviour is unchanged: every wrapper calls
// the original and returns what it returns.
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

  // Work that runs elsewhere or on the server's time.
  ["Worker", "SharedWorker", "WebSocket", "EventSource"].forEach(function (name) {
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
  //   draws no frame (hidden) is read after 100 ms instead;
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
      var unanswered = null;
      var look = function () {
        if (!resolve) return;
        if (L.pending > 0) {
          wake = function () { wake = null; setT(look, 0); };
          if (unanswered === null) unanswered = setT(read, 20);
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
          setT(read, 100);
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
