// The service pages' one script (served from /static/, allowed by the pages' CSP "script-src 'self'";
// no inline script, no eval). Every page works without it: it only makes two things nicer.
//
// 1. A code box (textarea[data-indent]): Tab inserts the indent (four spaces) instead of leaving the
//    box, Shift+Tab removes up to one indent from the start of each selected line; with several
//    lines selected, Tab indents each. Esc, then Tab, leaves the box (keyboard users are never trapped).
// 2. A pending result (an element #result[data-poll="/api/submissions/ID"]): the page polls that JSON
//    endpoint (the caller's own view of the attempt, with the login cookie) and, once its "status" is
//    neither "queued" nor "running", fetches this page again and swaps its #result in, so the result
//    appears without a reload. Without JavaScript the page refreshes itself (<noscript> meta refresh).
"use strict";

(function () {
  var PENDING = { queued: true, running: true };

  function lineStart(text, pos) {
    return text.lastIndexOf("\n", pos - 1) + 1;
  }

  // Replace [start, end) of the box with `text`, keeping the browser's undo history where it can.
  function replaceRange(box, start, end, text) {
    box.setSelectionRange(start, end);
    var done = false;
    try {
      done = document.execCommand("insertText", false, text);
    } catch (e) {
      done = false;
    }
    if (!done || box.value.substring(start, start + text.length) !== text) {
      box.setRangeText(text, start, end, "end");
    }
  }

  function indentBox(box) {
    var unit = box.getAttribute("data-indent") || "    ";
    var escaped = false;
    box.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape") {
        escaped = true;
        return;
      }
      if (ev.key !== "Tab" || ev.altKey || ev.ctrlKey || ev.metaKey || escaped) {
        escaped = false;
        return;
      }
      ev.preventDefault();
      var text = box.value, start = box.selectionStart, end = box.selectionEnd;
      var multi = text.substring(start, end).indexOf("\n") >= 0;
      if (!ev.shiftKey && !multi) {
        replaceRange(box, start, end, unit);
        return;
      }
      var from = lineStart(text, start);
      var to = end > start && text.charAt(end - 1) === "\n" ? end - 1 : end;
      var lines = text.substring(from, to).split("\n");
      var changed = lines.map(function (line) {
        if (!ev.shiftKey) {
          return unit + line;
        }
        var n = 0;
        while (n < unit.length && line.charAt(n) === " ") {
          n += 1;
        }
        return line.substring(n);
      });
      var block = changed.join("\n");
      if (block === lines.join("\n")) {
        return;
      }
      replaceRange(box, from, to, block);
      if (multi) {
        box.setSelectionRange(from, from + block.length);
      } else {  // Shift+Tab on one line: the caret keeps its place in the line
        var moved = lines[0].length - changed[0].length;
        var caret = Math.max(from, start - moved);
        box.setSelectionRange(caret, caret);
      }
    });
    box.addEventListener("blur", function () {
      escaped = false;
    });
  }

  function poll(el, delay) {
    var url = el.getAttribute("data-poll");
    window.setTimeout(function () {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) {
          if (!r.ok) {
            throw new Error("status " + r.status);
          }
          return r.json();
        })
        .then(function (doc) {
          if (PENDING[doc.status]) {
            poll(el, 1500);
            return null;
          }
          return fetch(window.location.href, { credentials: "same-origin" })
            .then(function (r) {
              return r.ok ? r.text() : null;
            })
            .then(function (html) {
              var fresh = html && new DOMParser().parseFromString(html, "text/html").getElementById("result");
              if (!fresh) {  // the page itself refused (a timed session over, say): let the server say why
                window.location.reload();
                return;
              }
              var adopted = document.importNode(fresh, true);
              el.replaceWith(adopted);
              if (adopted.hasAttribute("data-poll")) {
                poll(adopted, 1500);
              }
            });
        })
        .catch(function () {
          poll(el, Math.min(delay * 2, 15000));  // the server busy or restarting: try again, slower
        });
    }, delay);
  }

  function start() {
    var boxes = document.querySelectorAll("textarea[data-indent]");
    for (var i = 0; i < boxes.length; i += 1) {
      indentBox(boxes[i]);
    }
    var pending = document.querySelector("#result[data-poll]");
    if (pending) {
      poll(pending, 1000);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
