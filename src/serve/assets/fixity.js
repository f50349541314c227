// fixity serve: live updates. Every page reads without this script; with it, the main
// part of the page is fetched again when the server says what it shows has changed
// (server-sent events from /events), unless a form on it is being filled in.
(function () {
  "use strict";
  if (!window.EventSource || !window.fetch) return;
  // A page without a user (the login page) has nothing live to show.
  if (!document.querySelector("header .who")) return;
  var live = document.getElementById("live");
  var busy = false, again = false;
  function editing() {
    var a = document.activeElement;
    return a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT") && a.value !== "";
  }
  function reload() {
    if (busy) { again = true; return; }
    if (editing()) return;
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (!text) return;
        var doc = new DOMParser().parseFromString(text, "text/html");
        var fresh = doc.getElementById("main"), main = document.getElementById("main");
        if (fresh && main && fresh.innerHTML !== main.innerHTML) main.innerHTML = fresh.innerHTML;
        if (live) live.textContent = "updated " + new Date().toLocaleTimeString();
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; reload(); } });
  }
  var onAction = /^\/actions(\/|$)/.test(location.pathname) || /\/file$/.test(location.pathname);
  var es = new EventSource("/events");
  es.addEventListener("change", reload);
  if (onAction) es.addEventListener("action", reload);
  es.onopen = function () { if (live) live.textContent = "live"; };
  es.onerror = function () { if (live) live.textContent = "reconnecting..."; };
})();
