/// The waiting-room page's script: a small URL-triggered NetFUNNEL agent speaking the native
/// dialect of `/ts.wseq` (`<code>:<k=v&…>` replies) with `fetch()`. 5101, then 5002 after each
/// 201's `ttl` (clamped to 1…30 s) with the newest key; on 200 it sends 5004 with the newest
/// key and replaces the page with the target (`netfunnel=passed`); 300/303 go to the target
/// without a key; 301/302 show the block. A failed request is retried after 1, 2, 4, … 30 s.
enum NetFUNNELWaitingRoomScript {
    static let js = #"""
        (function () {
          'use strict';
          var root = document.getElementById('room');
          if (!root || !window.fetch) return;
          var sid = root.getAttribute('data-sid'), aid = root.getAttribute('data-aid');
          var target = root.getAttribute('data-target');
          var key = '', firstWait = 0, polls = 0, failures = 0;
          function text(id, value) { var e = document.getElementById(id); if (e) e.textContent = value; }
          function decode(v) { try { return decodeURIComponent(v); } catch (e) { return v; } }
          function parse(body) {
            var colon = body.indexOf(':');
            var code = parseInt(colon < 0 ? body : body.slice(0, colon), 10);
            var params = {};
            if (colon >= 0) {
              body.slice(colon + 1).split('&').forEach(function (pair) {
                var eq = pair.indexOf('=');
                if (eq > 0) params[pair.slice(0, eq)] = decode(pair.slice(eq + 1));
              });
            }
            if (isNaN(code)) throw new Error('not a NetFUNNEL reply');
            return { code: code, params: params };
          }
          function ask(opcode, withKey) {
            var q = 'opcode=' + opcode;
            if (withKey) q += '&key=' + encodeURIComponent(key);
            if (opcode !== 5004) q += '&sid=' + encodeURIComponent(sid) + '&aid=' + encodeURIComponent(aid);
            q += '&' + Date.now();
            return fetch('/ts.wseq?' + q, { cache: 'no-store' }).then(function (r) {
              if (!r.ok) throw new Error('HTTP ' + r.status);
              return r.text();
            }).then(parse);
          }
          function go(result) {
            var sep = target.indexOf('?') < 0 ? '?' : '&';
            window.location.replace(target + sep + 'netfunnel=' + result);
          }
          function bar(percent) {
            var b = document.getElementById('progress');
            if (!b) return;
            b.setAttribute('aria-valuenow', String(percent));
            b.firstElementChild.style.width = percent + '%';
          }
          function show(p) {
            var nwait = parseInt(p.nwait || '0', 10), nnext = parseInt(p.nnext || '0', 10);
            var tps = parseFloat(p.tps || '0');
            if (!firstWait) firstWait = Math.max(1, nwait);
            text('ahead', String(Math.max(0, nwait - 1)));
            text('behind', String(nnext));
            text('eta', tps > 0 ? 'about ' + Math.ceil(nwait / tps) + ' s' : 'unknown (nobody was admitted in the last seconds)');
            bar(Math.max(0, Math.min(100, Math.floor(100 * (firstWait - nwait) / firstWait))));
            var m = document.getElementById('message');
            if (m && p.live_message !== undefined) { m.textContent = p.live_message; m.hidden = !p.live_message; }
            text('status', 'Updated ' + new Date().toLocaleTimeString() + '. This page takes you on when it is your turn.');
          }
          function handle(reply) {
            failures = 0;
            polls += 1;
            text('polls', String(polls));
            text('code', String(reply.code));
            var p = reply.params;
            if (p.key) key = p.key;
            switch (reply.code) {
              case 201:
                show(p);
                var ttl = parseInt(p.ttl || '1', 10);
                window.setTimeout(function () { step(5002); }, Math.max(1, Math.min(30, isNaN(ttl) ? 1 : ttl)) * 1000);
                return;
              case 200:
                text('ahead', '0');
                bar(100);
                text('title', 'It is your turn');
                text('status', 'It is your turn. Returning the key and taking you on…');
                ask(5004, true).then(function () { go('passed'); }, function () { go('passed'); });
                return;
              case 300: case 303:
                text('status', 'No waiting for you (' + reply.code + '). Taking you on…');
                go(reply.code === 300 ? 'bypass' : 'express');
                return;
              case 301: case 302:
                text('title', 'Entry is blocked');
                text('status', 'This segment does not admit anyone right now (' + reply.code + ').');
                document.body.classList.add('blocked');
                return;
              default:
                text('title', 'The waiting room could not continue');
                text('status', 'The server answered ' + reply.code + (p.msg ? ': ' + p.msg : '') + '.');
            }
          }
          function step(opcode) {
            ask(opcode, opcode !== 5101).then(handle).catch(function (e) {
              failures += 1;
              var wait = Math.min(30, Math.pow(2, failures - 1));
              text('status', 'Connection problem (' + (e && e.message ? e.message : e) + '); trying again in ' + wait + ' s. You keep your place.');
              window.setTimeout(function () { step(key ? 5002 : 5101); }, wait * 1000);
            });
          }
          step(5101);
        })();
        """#
}
