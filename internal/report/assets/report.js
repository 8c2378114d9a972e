// Draws the report's charts with uPlot from window.reportChartData, and
// records what it drew in window.reportCharts (points per chart) for
// the browser tests. window.reportReady is set when every chart is done.
(function () {
  "use strict";
  var palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var drawn = {};

  function translucent(hex, alpha) {
    var m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex || "");
    if (!m) return "rgba(31,119,180," + alpha + ")";
    return "rgba(" + parseInt(m[1], 16) + "," + parseInt(m[2], 16) + "," + parseInt(m[3], 16) + "," + alpha + ")";
  }

  function fmt(v) {
    if (v == null || !isFinite(v)) return "–";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
    return v.toLocaleString("en-US", { maximumFractionDigits: a >= 100 ? 1 : a >= 1 ? 3 : 4 });
  }

  // Axis tick labels: a log axis' minor ticks come as null, unlabelled.
  function axisValues(u, vs) { return vs.map(function (v) { return v == null ? "" : fmt(v); }); }

  // Aligns the series on the union of their x values: uPlot draws
  // series that share one x array.
  function align(spec) {
    var xs = [];
    spec.series.forEach(function (s) { s.x.forEach(function (x) { if (x != null) xs.push(x); }); });
    xs.sort(function (a, b) { return a - b; });
    var uniq = [];
    for (var i = 0; i < xs.length; i++) if (i === 0 || xs[i] !== xs[i - 1]) uniq.push(xs[i]);
    var index = new Map();
    uniq.forEach(function (x, i) { index.set(x, i); });
    var columns = [uniq];
    var logY = spec.y.log, logX = spec.x.log;
    // A value a series does not have at another series' x is undefined,
    // which uPlot joins over; a NaN of the data (null) is a gap.
    function column(s, values) {
      var col = new Array(uniq.length).fill(undefined);
      s.x.forEach(function (x, i) {
        var v = values[i];
        if (x == null) return;
        if (v != null && logY && !s.right && v <= 0) v = null;
        col[index.get(x)] = v;
      });
      return col;
    }
    spec.series.forEach(function (s) {
      columns.push(column(s, s.y));
      if (s.low) { columns.push(column(s, s.high)); columns.push(column(s, s.low)); }
    });
    if (logX) {
      // Points at x <= 0 cannot be drawn on a log axis.
      var keep = uniq.map(function (x) { return x > 0; });
      columns = columns.map(function (c) { return c.filter(function (_, i) { return keep[i]; }); });
    }
    return columns;
  }

  function pointLabelsHook(spec, seriesIndexes) {
    return function (u) {
      var ctx = u.ctx;
      ctx.save();
      ctx.font = Math.round(11 * devicePixelRatio) + "px system-ui, sans-serif";
      ctx.fillStyle = "#57606a";
      spec.series.forEach(function (s, k) {
        if (!s.pointLabels) return;
        var idx = seriesIndexes[k];
        s.x.forEach(function (x, i) {
          var y = s.y[i];
          if (x == null || y == null || !s.pointLabels[i]) return;
          var px = u.valToPos(x, "x", true), py = u.valToPos(y, u.series[idx].scale, true);
          if (!isFinite(px) || !isFinite(py)) return;
          ctx.fillText(s.pointLabels[i], px + 6 * devicePixelRatio, py - 6 * devicePixelRatio);
        });
      });
      ctx.restore();
    };
  }

  function build(spec, el) {
    var data = align(spec);
    var series = [{ label: spec.x.label, value: function (u, v) { return fmt(v); } }];
    var bands = [];
    var seriesIndexes = [];
    var points = 0;
    spec.series.forEach(function (s, k) {
      var color = s.color || palette[k % palette.length];
      var opt = { label: s.label, stroke: color, width: 1.5, scale: s.right ? "y2" : "y", spanGaps: false, value: function (u, v) { return fmt(v); } };
      switch (s.style) {
        case "points":
          opt.paths = function () { return null; };
          opt.points = { show: true, size: 4, width: 1, fill: translucent(color, 0.55), stroke: color };
          break;
        case "dashed":
          opt.dash = [8, 5];
          opt.points = { show: false };
          break;
        case "step":
          opt.paths = uPlot.paths.stepped({ align: 1 });
          opt.points = { show: false };
          break;
        case "linepoints":
          opt.points = { show: true, size: 6, fill: color };
          break;
        default:
          opt.points = { show: false };
      }
      series.push(opt);
      seriesIndexes.push(series.length - 1);
      s.y.forEach(function (v) { if (v != null) points++; });
      if (s.low) {
        var hi = series.length;
        series.push({ label: s.label + " (CI high)", stroke: translucent(color, 0.35), width: 0.5, scale: opt.scale, points: { show: false }, value: function (u, v) { return fmt(v); } });
        series.push({ label: s.label + " (CI low)", stroke: translucent(color, 0.35), width: 0.5, scale: opt.scale, points: { show: false }, value: function (u, v) { return fmt(v); } });
        bands.push({ series: [hi, hi + 1], fill: translucent(color, 0.15) });
      }
    });
    var axes = [
      { label: spec.x.label, stroke: "#57606a", grid: { stroke: "#eaeef2" }, values: axisValues },
      { label: spec.y.label, stroke: "#57606a", grid: { stroke: "#eaeef2" }, size: 70, values: axisValues }
    ];
    var scales = { x: { time: false }, y: {} };
    if (spec.x.log) scales.x.distr = 3;
    if (spec.y.log) scales.y.distr = 3;
    if (spec.x.range) scales.x.range = spec.x.range;
    if (spec.y.range) scales.y.range = spec.y.range;
    if (spec.y2) {
      scales.y2 = {};
      if (spec.y2.log) scales.y2.distr = 3;
      axes.push({ label: spec.y2.label, scale: "y2", side: 1, stroke: "#57606a", grid: { show: false }, size: 70, values: axisValues });
    }
    var width = Math.max(320, el.clientWidth || 900);
    var opts = {
      width: width, height: 340, series: series, axes: axes, scales: scales, bands: bands,
      cursor: { drag: { x: true, y: false }, points: { size: 7 } },
      legend: { live: true },
      hooks: { draw: [pointLabelsHook(spec, seriesIndexes)] }
    };
    var plot = new uPlot(opts, data, el);
    window.addEventListener("resize", function () { plot.setSize({ width: Math.max(320, el.clientWidth), height: 340 }); });
    return points;
  }

  function drawAll() {
    var specs = window.reportChartData || [];
    specs.forEach(function (spec) {
      var fig = document.getElementById("chart-" + spec.id);
      if (!fig) { console.error("report: no element for chart " + spec.id); return; }
      var el = fig.querySelector(".plot");
      try {
        var n = build(spec, el);
        drawn[spec.id] = { points: n, series: spec.series.length };
        fig.setAttribute("data-points", String(n));
      } catch (e) {
        el.textContent = "This chart could not be drawn: " + e;
        el.className += " chart-error";
        console.error("report: chart " + spec.id + ": " + e);
      }
    });
    window.reportCharts = drawn;
    window.reportReady = true;
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", drawAll);
  else drawAll();
})();
