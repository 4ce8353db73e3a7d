// txmap's one script: suggestions while typing in the search box, chosen
// with the keyboard, and the status page refreshing itself. Every page
// works without it.
"use strict";
(function () {
  function announce(text) {
    var live = document.getElementById("announce");
    if (live) live.textContent = text;
  }

  function suggest(input) {
    var list = document.getElementById(input.getAttribute("aria-controls"));
    var form = input.form;
    var timer = null, asked = 0, active = -1;
    function items() { return list.querySelectorAll("li"); }
    function close() {
      list.hidden = true; list.textContent = ""; active = -1;
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
    }
    function choose(i) {
      var all = items();
      if (!all.length) return;
      active = (i + all.length) % all.length;
      all.forEach(function (li, j) { li.setAttribute("aria-selected", j === active ? "true" : "false"); });
      input.setAttribute("aria-activedescendant", all[active].id);
    }
    function show(answer, seq) {
      if (seq !== asked) return; // an older answer, overtaken
      close();
      var found = answer.suggestions || [];
      found.forEach(function (s, i) {
        var li = document.createElement("li");
        li.id = "suggestion-" + i;
        li.setAttribute("role", "option");
        li.dataset.href = s.href;
        var a = document.createElement("a");
        a.href = s.href;
        a.tabIndex = -1;
        var code = document.createElement("span");
        code.className = "code";
        code.textContent = s.code;
        a.appendChild(code);
        a.appendChild(document.createTextNode(" " + s.display));
        if (s.matched && s.matched !== s.display) {
          var m = document.createElement("small");
          m.textContent = " — " + s.matched;
          a.appendChild(m);
        }
        li.appendChild(a);
        list.appendChild(li);
      });
      if (!found.length && answer.didYouMean) {
        // Nothing matched: offer what was probably meant, as its own
        // search — never mixed into results.
        var li = document.createElement("li");
        li.id = "suggestion-0";
        li.setAttribute("role", "option");
        var params = new URLSearchParams({ q: answer.didYouMean });
        var version = form && form.elements.version;
        if (version && version.value) params.set("version", version.value);
        li.dataset.href = "/browse?" + params;
        var a = document.createElement("a");
        a.href = li.dataset.href;
        a.tabIndex = -1;
        a.textContent = "Did you mean: " + answer.didYouMean + "?";
        li.appendChild(a);
        list.appendChild(li);
      }
      if (list.children.length) {
        list.hidden = false;
        input.setAttribute("aria-expanded", "true");
      }
      var total = answer.total == null ? found.length : answer.total;
      announce(total + (total === 1 ? " concept matches" : " concepts match") +
        (answer.didYouMean && !found.length ? "; did you mean " + answer.didYouMean + "?" : ""));
    }
    function ask() {
      var q = input.value.trim();
      if (q.length < 2) { close(); return; }
      var seq = ++asked;
      var params = new URLSearchParams({ q: q });
      var version = form && form.elements.version;
      if (version && version.value) params.set("version", version.value);
      var lang = document.getElementById("lang");
      if (lang && lang.value) params.set("lang", lang.value);
      fetch(input.dataset.suggest + "?" + params, { headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { suggestions: [] }; })
        .then(function (a) { show(a, seq); })
        .catch(function () {});
    }
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(ask, 80);
    });
    input.addEventListener("keydown", function (e) {
      if (list.hidden) return;
      if (e.key === "ArrowDown") { e.preventDefault(); choose(active + 1); }
      else if (e.key === "ArrowUp") { e.preventDefault(); choose(active - 1); }
      else if (e.key === "Escape") { close(); }
      else if (e.key === "Enter" && active >= 0) {
        e.preventDefault();
        window.location.href = items()[active].dataset.href;
      }
    });
    input.addEventListener("blur", function () { setTimeout(close, 200); });
  }

  function refresh(live) {
    var seconds = Number(live.dataset.refresh) || 3;
    setInterval(function () {
      fetch(window.location.href, { headers: { Accept: "text/html" } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var next = new DOMParser().parseFromString(html, "text/html").getElementById("live");
          if (!next) return;
          // Keep open what the reader opened.
          var open = Array.prototype.map.call(live.querySelectorAll("details"), function (d) { return d.open; });
          next.querySelectorAll("details").forEach(function (d, i) { if (open[i]) d.open = true; });
          live.innerHTML = next.innerHTML;
        })
        .catch(function () {});
    }, seconds * 1000);
  }

  document.querySelectorAll("input[data-suggest]").forEach(suggest);
  var live = document.querySelector("[data-refresh]");
  if (live) refresh(live);
  var count = document.getElementById("result-count");
  if (count) announce(count.textContent);
})();
