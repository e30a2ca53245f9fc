/// The queue page's script: polls the page's status route with `fetch()` every
/// `data-poll-seconds` (the room's `refreshSeconds`), updates the figures and the progress bar in
/// place, and on the visitor's turn replaces the page with the target URL (`queueittoken`
/// attached). A failed poll is retried after 1, 2, 4, … 30 s and said in the status line; the
/// visitor keeps its place (the queue id is in the URL).
enum QueueItQueuePageScript {
    static let js = #"""
        (function () {
          'use strict';
          var root = document.getElementById('queue');
          if (!root || !window.fetch) return;
          var statusURL = root.getAttribute('data-status-url');
          var poll = Number(root.getAttribute('data-poll-seconds')) || 1;
          var failures = 0;
          function text(id, value) { var e = document.getElementById(id); if (e) e.textContent = value; }
          function eta(seconds) {
            if (seconds === undefined || seconds === null) return 'unknown (nobody is being admitted right now)';
            return seconds < 120 ? 'about ' + seconds + ' s' : 'about ' + Math.ceil(seconds / 60) + ' min';
          }
          function show(d) {
            text('ahead', String(d.ahead));
            text('behind', String(d.behind));
            text('eta', eta(d.etaSeconds));
            text('position', 'Visitors ahead of you: ' + d.ahead + ' (' + d.waiting + ' waiting).');
            var bar = document.getElementById('progress');
            if (bar) {
              bar.setAttribute('aria-valuenow', String(d.progress));
              bar.firstElementChild.style.width = d.progress + '%';
            }
            var m = document.getElementById('message');
            if (m) { m.textContent = d.message || ''; m.hidden = !d.message; }
            text('status', 'Updated ' + new Date().toLocaleTimeString() + '. This page takes you on when it is your turn.');
          }
          function later(seconds) { window.setTimeout(tick, seconds * 1000); }
          function tick() {
            fetch(statusURL, { cache: 'no-store', headers: { 'Accept': 'application/json' } })
              .then(function (r) {
                if (r.status === 404) return { gone: true };
                if (!r.ok) throw new Error('HTTP ' + r.status);
                return r.json();
              })
              .then(function (d) {
                failures = 0;
                if (d.gone) {
                  document.body.classList.add('exit');
                  text('status', 'This queue id is no longer in the line. Start over to queue again.');
                  return;
                }
                if (d.passed && d.redirectUrl) {
                  text('status', 'It is your turn. Taking you on…');
                  var bar = document.getElementById('progress');
                  if (bar) { bar.setAttribute('aria-valuenow', '100'); bar.firstElementChild.style.width = '100%'; }
                  text('ahead', '0');
                  window.location.replace(d.redirectUrl);
                  return;
                }
                show(d);
                later(d.pollSeconds || poll);
              })
              .catch(function (e) {
                failures += 1;
                var wait = Math.min(30, Math.pow(2, failures - 1));
                text('status', 'Connection problem (' + (e && e.message ? e.message : e) + '); trying again in ' + wait + ' s. You keep your place.');
                later(wait);
              });
          }
          later(poll);
        })();
        """#
}
