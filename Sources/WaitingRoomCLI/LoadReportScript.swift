/// The load report's script: draws the histogram and the two timelines from the embedded
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
      document.body.setAttribute('data-rendered', 'yes');
    })();
    """#
}
