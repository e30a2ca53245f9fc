/// A small chart library in plain JavaScript, written for this package (no third-party code),
/// inlined into the dashboard and the load report: no network at view time.
///
/// - `wrLineChart(svg, series, options)`: `series` = `[{name, color, points: [[x, y], …]}]`;
///   options `{xLabel, yLabel, xFormat(x), yFormat(y), step}` (`step`: draw steps, not slopes).
/// - `wrBarChart(svg, bars, options)`: `bars` = `[{label, value, color}]`; options `{yLabel}`.
///
/// Both clear the `<svg>` and draw into its `viewBox` (default 640×220), with a legend.
package enum SVGChartScript {
    /// The script text.
    package static let js = #"""
        (function (g) {
          'use strict';
          var NS = 'http://www.w3.org/2000/svg';
          function el(name, attrs, parent, text) {
            var e = document.createElementNS(NS, name);
            for (var k in attrs) e.setAttribute(k, attrs[k]);
            if (text !== undefined) e.textContent = text;
            if (parent) parent.appendChild(e);
            return e;
          }
          function box(svg) {
            var vb = (svg.getAttribute('viewBox') || '0 0 640 220').split(/[ ,]+/).map(Number);
            if (!svg.getAttribute('viewBox')) svg.setAttribute('viewBox', vb.join(' '));
            while (svg.firstChild) svg.removeChild(svg.firstChild);
            return { w: vb[2], h: vb[3], l: 52, r: 12, t: 24, b: 40 };
          }
          function nice(max) {
            if (!(max > 0)) return 1;
            var p = Math.pow(10, Math.floor(Math.log10(max))), m = max / p;
            return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
          }
          function fmt(v) {
            if (Math.abs(v) >= 1000) return (v / 1000).toFixed(v % 1000 === 0 ? 0 : 1) + 'k';
            return Math.abs(v - Math.round(v)) < 1e-9 ? String(Math.round(v)) : v.toFixed(2);
          }
          function axes(svg, b, yMax, yFormat, yLabel) {
            var plotH = b.h - b.t - b.b;
            for (var i = 0; i <= 4; i++) {
              var y = b.t + plotH - plotH * i / 4;
              el('line', { x1: b.l, x2: b.w - b.r, y1: y, y2: y, stroke: '#dde3ec', 'stroke-width': 1 }, svg);
              el('text', { x: b.l - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5a6b85' }, svg, yFormat(yMax * i / 4));
            }
            if (yLabel) el('text', { x: 4, y: b.t - 10, 'font-size': 11, fill: '#5a6b85' }, svg, yLabel);
          }
          function legend(svg, b, items) {
            var x = b.l;
            items.forEach(function (s) {
              el('rect', { x: x, y: b.h - 14, width: 10, height: 10, fill: s.color }, svg);
              el('text', { x: x + 14, y: b.h - 5, 'font-size': 11, fill: '#1b2330' }, svg, s.name);
              x += 24 + 6.5 * s.name.length;
            });
          }
          g.wrLineChart = function (svg, series, o) {
            o = o || {};
            var b = box(svg), xf = o.xFormat || fmt, yf = o.yFormat || fmt;
            var xs = [], yMax = 0;
            series.forEach(function (s) { s.points.forEach(function (p) { xs.push(p[0]); if (p[1] > yMax) yMax = p[1]; }); });
            yMax = nice(yMax);
            axes(svg, b, yMax, yf, o.yLabel);
            var plotW = b.w - b.l - b.r, plotH = b.h - b.t - b.b;
            if (!xs.length) {
              el('text', { x: b.l + plotW / 2, y: b.t + plotH / 2, 'text-anchor': 'middle', 'font-size': 12, fill: '#5a6b85' }, svg, 'no data yet');
              legend(svg, b, series);
              return;
            }
            var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
            if (x1 === x0) x1 = x0 + 1;
            function X(x) { return b.l + plotW * (x - x0) / (x1 - x0); }
            function Y(y) { return b.t + plotH - plotH * y / yMax; }
            for (var i = 0; i <= 4; i++) {
              var xv = x0 + (x1 - x0) * i / 4;
              el('text', { x: X(xv), y: b.t + plotH + 14, 'text-anchor': 'middle', 'font-size': 11, fill: '#5a6b85' }, svg, xf(xv));
            }
            if (o.xLabel) el('text', { x: b.w - b.r, y: b.t + plotH + 28, 'text-anchor': 'end', 'font-size': 11, fill: '#5a6b85' }, svg, o.xLabel);
            series.forEach(function (s) {
              var d = '';
              s.points.forEach(function (p, i) {
                if (i === 0) d += 'M' + X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1);
                else if (o.step) d += 'H' + X(p[0]).toFixed(1) + 'V' + Y(p[1]).toFixed(1);
                else d += 'L' + X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1);
              });
              el('path', { d: d, fill: 'none', stroke: s.color, 'stroke-width': 2, 'stroke-linejoin': 'round' }, svg);
            });
            legend(svg, b, series);
          };
          g.wrBarChart = function (svg, bars, o) {
            o = o || {};
            var b = box(svg), yMax = 0;
            bars.forEach(function (x) { if (x.value > yMax) yMax = x.value; });
            yMax = nice(yMax);
            axes(svg, b, yMax, fmt, o.yLabel);
            var plotW = b.w - b.l - b.r, plotH = b.h - b.t - b.b, n = Math.max(1, bars.length), w = plotW / n;
            bars.forEach(function (x, i) {
              var h = plotH * x.value / yMax;
              var r = el('rect', { x: b.l + i * w + 2, y: b.t + plotH - h, width: Math.max(1, w - 4), height: h, fill: x.color || '#2f6fdd' }, svg);
              el('title', {}, r, x.label + ': ' + x.value);
              el('text', { x: b.l + i * w + w / 2, y: b.t + plotH + 14, 'text-anchor': 'middle', 'font-size': 10, fill: '#5a6b85' }, svg, x.label);
              if (x.value > 0) el('text', { x: b.l + i * w + w / 2, y: b.t + plotH - h - 3, 'text-anchor': 'middle', 'font-size': 10, fill: '#1b2330' }, svg, String(x.value));
            });
          };
        })(window);
        """#
}
