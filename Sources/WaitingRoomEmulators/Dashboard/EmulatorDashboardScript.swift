/// The dashboard's script: polls `/_emulator/status` every second, draws one section per vendor
/// (totals, counters, a row per room with its controls) and keeps 5 minutes of history for the
/// charts (users waiting per room; admissions per second from the growth of `admittedTotal`).
/// Controls send the vendor's admin request (`"$value"` in a body replaced by the typed number).
enum EmulatorDashboardScript {
    static let js = #"""
        (function () {
          'use strict';
          var WINDOW = 300, history = {}, signature = '', last = null;
          var colors = ['#2f6fdd', '#1f9a62', '#e07b00', '#b03a9e', '#c0392b', '#0e8fa3', '#6b5bd6', '#7a8a00'];
          function h(tag, attrs, children) {
            var e = document.createElement(tag);
            for (var k in (attrs || {})) {
              if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
            }
            (children || []).forEach(function (c) { if (c) e.appendChild(c); });
            return e;
          }
          function roomId(v, r) { return v.vendor + '/' + r.scope + '/' + r.room; }
          function num(v) {
            if (v === null || v === undefined) return '—';
            return Math.abs(v - Math.round(v)) < 1e-9 ? String(Math.round(v)) : v.toFixed(2);
          }
          function send(c, input) {
            var body = c.body === undefined ? undefined : JSON.stringify(c.body, function (k, v) {
              return v === '$value' ? Number(input ? input.value : 0) : v;
            });
            var opts = { method: c.method, headers: { 'Content-Type': 'application/json' } };
            if (body !== undefined) opts.body = body;
            fetch(c.path, opts).then(function (r) {
              return r.text().then(function (t) {
                document.getElementById('action').textContent = c.label + ': HTTP ' + r.status + (r.ok ? '' : ' ' + t.slice(0, 200));
              });
            }).catch(function (e) {
              document.getElementById('action').textContent = c.label + ' failed: ' + e;
            }).then(tick);
          }
          function controls(list, label) {
            var box = h('div', { 'class': 'controls' });
            list.forEach(function (c) {
              var input = null;
              if (c.input) {
                input = h('input', { type: 'number', step: 'any', min: '0', value: c.value === undefined ? '' : String(c.value), 'aria-label': label + ' ' + c.input });
                box.appendChild(input);
              }
              var b = h('button', { type: 'button', text: c.label });
              b.addEventListener('click', function () { send(c, input); });
              box.appendChild(b);
            });
            return box;
          }
          function build(status) {
            var root = document.getElementById('vendors');
            while (root.firstChild) root.removeChild(root.firstChild);
            status.vendors.forEach(function (v) {
              var totals = h('div', { 'class': 'totals' }, [
                h('span', {}, [document.createTextNode('waiting '), h('b', { 'data-vendor': v.vendor, 'data-field': 'waiting' })]),
                h('span', {}, [document.createTextNode('admitted '), h('b', { 'data-vendor': v.vendor, 'data-field': 'admittedTotal' })]),
                h('span', {}, [document.createTextNode('keys never returned '), h('b', { 'data-vendor': v.vendor, 'data-field': 'keysNeverReturned' })]),
                h('span', {}, [document.createTextNode('faults injected '), h('b', { 'data-vendor': v.vendor, 'data-field': 'faultsInjected' })]),
                h('span', {}, [document.createTextNode('faults pending '), h('b', { 'data-vendor': v.vendor, 'data-field': 'faultsPending' })]),
              ]);
              var head = h('tr', {}, ['Room', 'State', 'Waiting', 'Inside', 'Admitted', 'Rate', 'Limit', 'Controls'].map(function (t) {
                return h('th', { scope: 'col', text: t });
              }));
              var rows = v.rooms.map(function (r) {
                var id = roomId(v, r);
                var name = h('td', {});
                if (r.queuePagePath) name.appendChild(h('a', { href: r.queuePagePath, text: r.scope + ' / ' + r.room, title: 'open the waiting page' }));
                else name.textContent = r.scope + ' / ' + r.room;
                function cell(field, title) { return h('td', { 'class': field === 'state' ? '' : 'num', 'data-room': id, 'data-field': field, title: title || '' }); }
                return h('tr', { 'data-room-row': id }, [
                  name, cell('state'), cell('waiting'), cell('inside'), cell('admittedTotal'), cell('rate', r.rateNote), cell('limit', r.limitNote),
                  h('td', {}, [controls(r.controls, id)]),
                ]);
              });
              var table = h('table', {}, [h('caption', { 'class': 'counters', text: 'Rooms of ' + v.displayName }), h('thead', {}, [head]), h('tbody', {}, rows)]);
              root.appendChild(h('section', { 'class': 'vendor', 'data-vendor-section': v.vendor, 'aria-label': v.displayName }, [
                h('h2', { text: v.displayName + ' · /_emulator/' + v.vendor + '/' }), totals, table,
                h('p', { 'class': 'counters', 'data-vendor': v.vendor, 'data-field': 'counters' }),
                controls(v.controls, v.vendor),
              ]));
            });
          }
          function set(selector, value) {
            var e = document.querySelector(selector);
            if (e && e.textContent !== value) e.textContent = value;
          }
          function update(status) {
            var sig = JSON.stringify(status.vendors.map(function (v) {
              return [v.vendor, v.controls.length, v.rooms.map(function (r) { return [r.scope, r.room, r.controls.length]; })];
            }));
            if (sig !== signature) { signature = sig; build(status); }
            status.vendors.forEach(function (v) {
              ['waiting', 'admittedTotal', 'keysNeverReturned', 'faultsInjected', 'faultsPending'].forEach(function (f) {
                set('b[data-vendor="' + v.vendor + '"][data-field="' + f + '"]', num(v[f]));
              });
              var names = Object.keys(v.counters).sort();
              set('p[data-vendor="' + v.vendor + '"][data-field="counters"]', names.map(function (n) { return n + ' ' + num(v.counters[n]); }).join(' · '));
              v.rooms.forEach(function (r) {
                var id = roomId(v, r);
                ['state', 'waiting', 'inside', 'admittedTotal', 'rate', 'limit'].forEach(function (f) {
                  set('td[data-room="' + id + '"][data-field="' + f + '"]', f === 'state' ? r.state : num(r[f]));
                });
                var list = history[id] || (history[id] = []);
                list.push({ t: status.time, waiting: r.waiting, admitted: r.admittedTotal });
                while (list.length && status.time - list[0].t > WINDOW) list.shift();
              });
            });
            draw(status.time);
            document.getElementById('updated').textContent = 'Updated ' + new Date(status.time * 1000).toLocaleTimeString() + ' · every second';
            document.body.setAttribute('data-polls', String(Number(document.body.getAttribute('data-polls') || '0') + 1));
          }
          function draw(now) {
            var ids = Object.keys(history).filter(function (id) {
              return history[id].some(function (p) { return p.waiting > 0; }) || history[id].some(function (p, i, a) { return i > 0 && p.admitted !== a[i - 1].admitted; });
            }).sort();
            var queue = [], rate = [];
            ids.forEach(function (id, i) {
              var list = history[id], color = colors[i % colors.length];
              queue.push({ name: id, color: color, points: list.map(function (p) { return [p.t - now, p.waiting]; }) });
              var pts = [];
              for (var k = 1; k < list.length; k++) {
                var dt = list[k].t - list[k - 1].t;
                if (dt > 0) pts.push([list[k].t - now, Math.max(0, (list[k].admitted - list[k - 1].admitted) / dt)]);
              }
              rate.push({ name: id, color: color, points: pts });
            });
            var xf = function (x) { return Math.round(x) + ' s'; };
            wrLineChart(document.getElementById('chart-queue'), queue, { xFormat: xf, yLabel: 'users', step: true });
            wrLineChart(document.getElementById('chart-rate'), rate, { xFormat: xf, yLabel: 'per s' });
          }
          function tick() {
            return fetch('/_emulator/status', { cache: 'no-store' }).then(function (r) {
              if (!r.ok) throw new Error('HTTP ' + r.status);
              return r.json();
            }).then(function (s) { last = s; update(s); }).catch(function (e) {
              document.getElementById('updated').textContent = 'Cannot read /_emulator/status: ' + e + ' (retrying)';
            });
          }
          tick();
          window.setInterval(tick, 1000);
        })();
        """#
}
