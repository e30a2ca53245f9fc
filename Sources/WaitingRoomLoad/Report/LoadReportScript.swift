/// The load report's script: draws the histogram, the two timelines and inflow/outflow per
/// second (averaged over a few seconds each when the run is long) from the embedded
/// `report-data` JSON, then marks `<body data-rendered="yes">`.
enum LoadReportScript {
    static let js = #"""
        (function () {
          'use strict';
          var data = JSON.parse(document.getElementById('report-data').textContent);
          var bars = (data.histogram || []).filter(function (b, i, all) {
            var first = all.findIndex(function (x) { return x.count > 0; });
            var last = all.length - 1 - all.slice().reverse().findIndex(function (x) { return x.count > 0; });
            return first >= 0 && i >= first && i <= last;
          }).map(function (b) { return { label: b.label, value: b.count, color: '#2f6fdd' }; });
          wrBarChart(document.getElementById('chart-histogram'), bars, { yLabel: 'users' });
          var points = (data.timeline && data.timeline.points) || [];
          var sec = function (x) { return x.toFixed(x < 10 ? 1 : 0) + ' s'; };
          wrLineChart(document.getElementById('chart-waiting'),
            [{ name: 'users waiting', color: '#e07b00', points: points.map(function (p) { return [p.t, p.waiting]; }) }],
            { xFormat: sec, yLabel: 'users', step: true });
          wrLineChart(document.getElementById('chart-admissions'),
            [{ name: 'admissions/s', color: '#1f9a62', points: points.slice(1).map(function (p) { return [p.t, p.admissionsPerSecond]; }) }],
            { xFormat: sec, yLabel: 'per s' });
          var perSecond = function (flow) {
            var counts = (flow && flow.perSecond) || [], k = Math.max(1, Math.ceil(counts.length / 600)), out = [];
            for (var i = 0; i < counts.length; i += k) {
              var slice = counts.slice(i, i + k), sum = slice.reduce(function (a, c) { return a + c; }, 0);
              out.push([i, sum / slice.length]);
            }
            if (counts.length) out.push([counts.length, out[out.length - 1][1]]);
            return out;
          };
          wrLineChart(document.getElementById('chart-flow'),
            [{ name: 'inflow/s', color: '#7a4fd6', points: perSecond(data.inflow) },
             { name: 'outflow/s', color: '#1f9a62', points: perSecond(data.outflow) }],
            { xFormat: sec, yLabel: 'users/s', step: true });
          document.body.setAttribute('data-rendered', 'yes');
        })();
        """#
}
