/* The offline report's script. It reads the run's data from the JSON in #trn-data and draws
   it with ECharts. A core run's page (src/profile/page_data.cpp, kind "cores"): the verdicts,
   engine usage, the timeline (slices, critical path, semaphore arrows), DMA bandwidth over time
   and the hot-line table. A collective's page (src/profile/collective_page.cpp, kind
   "collective"): the verdict, every algorithm's time, the timeline of links and HBM, the
   busiest links' load over time and the resource table. When done it marks <body> with data-status ("rendered" or "error", with
   data-errors) and data-slices, which tests/profile/html_report_browser_test.sh reads. */
(function () {
  'use strict';
  var body = document.body;
  var errors = [];

  function fail(message) {
    errors.push(String(message));
    body.setAttribute('data-status', 'error');
    body.setAttribute('data-errors', errors.join(' | '));
  }
  window.addEventListener('error', function (event) {
    fail(event.message || String(event));
  });

  var ENGINE_COLORS = { pe: '#2e7d32', act: '#ef6c00', dve: '#1565c0', pool: '#8e24aa', sp: '#546e7a' };
  var QUEUE_COLOR = '#00897b';
  var HBM_COLOR = '#8e24aa';
  var LINK_COLORS = ['#1565c0', '#ef6c00', '#2e7d32', '#6d4c41', '#c2185b'];
  var ENGINE_ORDER = ['pe', 'act', 'dve', 'pool', 'sp', 'dma'];

  function esc(text) {
    return String(text).replace(/[&<>"]/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c];
    });
  }
  function fmtNs(ns) {
    if (ns >= 1e6) { return (ns / 1e6).toFixed(3) + ' ms'; }
    if (ns >= 1e3) { return (ns / 1e3).toFixed(3) + ' us'; }
    return ns.toFixed(1) + ' ns';
  }
  function pct(x) { return (100 * x).toFixed(1) + ' %'; }
  function fmtBytes(b) {
    if (b >= 1 << 30) { return (b / (1 << 30)).toFixed(2) + ' GiB'; }
    if (b >= 1 << 20) { return (b / (1 << 20)).toFixed(2) + ' MiB'; }
    if (b >= 1 << 10) { return (b / (1 << 10)).toFixed(1) + ' KiB'; }
    return Math.round(b) + ' B';
  }
  function add(parent, tag, className, html) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (html !== undefined) { node.innerHTML = html; }
    parent.appendChild(node);
    return node;
  }
  function chartBox(parent, height) {
    var box = add(parent, 'div', 'chart');
    box.style.height = height + 'px';
    return echarts.init(box, null, { renderer: 'canvas' });
  }

  function header(app, data) {
    add(app, 'h1', '', esc(data.title));
    var instructions = 0;
    data.runs.forEach(function (r) { instructions += r.instructions; });
    add(app, 'div', 'meta', esc(data.chip) + ' &middot; ' + data.runs.length + ' run(s) &middot; ' +
      instructions + ' instructions &middot; ' + fmtNs(data.total_ns) + ' simulated' +
      (data.source_root ? ' &middot; source lines relative to ' + esc(data.source_root) : ''));
  }

  function verdicts(app, data) {
    add(app, 'h2', '', 'Verdict').id = 'verdict';
    data.runs.forEach(function (run, i) {
      var v = run.verdict;
      var card = add(app, data.runs.length > 1 ? 'details' : 'div', 'card verdict');
      if (data.runs.length > 1 && i === 0) { card.open = true; }
      var title = '<span class="bound bound-' + esc(v.bound) + '">' + esc(v.bound) + '</span>' +
        esc(run.name) + ' &middot; ' + fmtNs(run.total_ns) + ': ' + esc(v.headline);
      add(card, data.runs.length > 1 ? 'summary' : 'h3', '', title);
      add(card, 'div', 'label', 'Evidence');
      var ev = add(card, 'ul');
      v.evidence.forEach(function (line) { add(ev, 'li', '', esc(line)); });
      if (v.remedies.length) {
        add(card, 'div', 'label', 'Usual remedies');
        var rem = add(card, 'ul');
        v.remedies.forEach(function (line) { add(rem, 'li', '', esc(line)); });
      }
    });
  }

  /* One row per engine of each run; with more than two runs, one per engine of each lane,
     summed over the runs (each run's own figures are in its verdict's evidence). */
  function usageRows(data) {
    var rows = [];
    if (data.runs.length <= 2) {
      data.runs.forEach(function (run) {
        run.engines.forEach(function (e) {
          rows.push({ name: (data.runs.length > 1 ? run.name + ' \u00b7 ' : '') + e.engine, e: e });
        });
      });
      return rows;
    }
    var byKey = {};
    data.runs.forEach(function (run) {
      run.engines.forEach(function (e) {
        var key = run.lane + ' \u00b7 ' + e.engine;
        if (!byKey[key]) {
          byKey[key] = { name: key, e: { instructions: 0, busy_ns: 0, waiting_ns: 0 } };
          rows.push(byKey[key]);
        }
        var sum = byKey[key].e;
        sum.instructions += e.instructions;
        sum.busy_ns += e.busy_ns;
        sum.waiting_ns += e.waiting_ns;
      });
    });
    rows.forEach(function (r) {
      var e = r.e;
      e.busy = e.busy_ns / data.total_ns;
      e.waiting = e.waiting_ns / data.total_ns;
      e.idle_ns = Math.max(0, data.total_ns - e.busy_ns - e.waiting_ns);
      e.idle = e.idle_ns / data.total_ns;
    });
    return rows;
  }

  function engineUsage(app, data) {
    add(app, 'h2', '', 'Engines: busy, waiting on semaphores, idle' +
      (data.runs.length > 2 ? ' (over all runs; each run\'s own in its evidence)' : '')).id = 'engines';
    var rows = usageRows(data);
    var chart = chartBox(app, Math.max(140, 26 * rows.length + 70));
    function series(key, name, color) {
      return {
        type: 'bar', name: name, stack: 'time', itemStyle: { color: color },
        data: rows.map(function (r) { return +(100 * r.e[key]).toFixed(2); })
      };
    }
    chart.setOption({
      animation: false,
      legend: { top: 4 },
      grid: { left: 220, right: 30, top: 34, bottom: 24 },
      tooltip: {
        trigger: 'axis', axisPointer: { type: 'shadow' },
        formatter: function (items) {
          var r = rows[items[0].dataIndex].e;
          return esc(rows[items[0].dataIndex].name) + '<br>' + r.instructions + ' instructions<br>busy ' +
            fmtNs(r.busy_ns) + ' (' + pct(r.busy) + ')<br>waiting ' + fmtNs(r.waiting_ns) + ' (' +
            pct(r.waiting) + ')<br>idle ' + fmtNs(r.idle_ns) + ' (' + pct(r.idle) + ')';
        }
      },
      xAxis: { type: 'value', max: 100, axisLabel: { formatter: '{value} %' } },
      yAxis: { type: 'category', inverse: true, data: rows.map(function (r) { return r.name; }) },
      series: [series('busy', 'busy', '#2e7d32'), series('waiting', 'waiting', '#e53935'),
        series('idle', 'idle', '#cfd8dc')]
    });
    return chart;
  }

  function sliceTooltip(data, i) {
    var s = data.slices;
    var track = data.tracks[s.track[i]];
    var head = esc(track.name) + ' &middot; ' + fmtNs(s.start[i]) + ' + ' + fmtNs(s.dur[i]) +
      (s.critical[i] ? ' &middot; <b style="color:#d50000">on the critical path</b>' : '');
    if (s.count[i] > 1) {
      return head + '<br>' + s.count[i] + (track.kind === 'queue' ? ' transfers' : ' instructions') +
        ' merged (the run is larger than the page shows in full)<br>busy ' + fmtNs(s.waited[i]) +
        (s.bytes[i] ? '<br>' + s.bytes[i] + ' bytes' : '');
    }
    var ins = data.instrs[s.instr[i]];
    var lines = [head, '<b>' + esc(ins[0]) + '</b> ' + esc(ins[1])];
    if (ins[4]) { lines.push('source ' + esc(ins[4])); }
    if (track.kind === 'queue') {
      lines.push(s.bytes[i] + ' bytes; ' + fmtNs(s.waited[i]) + ' from issue to first byte');
    } else {
      lines.push(s.cycles[i] + ' cycles; waited ' + fmtNs(s.waited[i]));
    }
    if (ins[2]) { lines.push('waits ' + esc(ins[2])); }
    if (ins[3]) { lines.push('signals ' + esc(ins[3])); }
    return '<div class="tip">' + lines.join('<br>') + '</div>';
  }

  /* The source line picked in the hot-line table: the timeline dims every other slice. */
  var picked = { location: null };

  function sliceLocation(data, i) {
    if (!data.slices.instr) { return null; }
    var instr = data.slices.instr[i];
    if (instr < 0) { return null; }
    return data.instrs[instr][4] || '(no source line)';
  }

  function timelineChart(app, data) {
    var collective = data.kind === 'collective';
    add(app, 'h2', '', 'Timeline').id = 'timeline';
    if (collective) {
      var c = data.collective;
      add(app, 'div', 'hint', 'One row per link and HBM of each chip' +
        (c.chips_shown < c.chips_used ? ' of the ' + c.chips_shown + ' chips (of ' + c.chips_used +
          ') holding the busiest resources' : '') + '; a message sits on every resource it ' +
        'holds from its first byte to its end (overlapping ones on extra lanes, "#2"). Wheel or ' +
        'drag to zoom and pan; hover a slice for the message. Red outlines: the critical path.');
      return timelineBody(app, data, []);
    }
    add(app, 'div', 'hint', 'Wheel or drag to zoom and pan (or use the sliders); hover a slice ' +
      'for its instruction. Red outlines: the critical path. Arrows: a semaphore update and the ' +
      'wait it released (red on the critical path).');
    var toggle = add(app, 'label', 'hint');
    var allArrows = document.createElement('input');
    allArrows.type = 'checkbox';
    allArrows.id = 'all-arrows';
    toggle.appendChild(allArrows);
    toggle.appendChild(document.createTextNode(' every semaphore arrow (' + data.arrows.length +
      '), not only those on the critical path'));
    var view = timelineBody(app, data, data.arrows.filter(function (a) { return a[4] === 1; }));
    allArrows.addEventListener('change', function () {
      view.chart.setOption({ series: [{}, { data: allArrows.checked ? data.arrows : view.pathArrows }] });
    });
    return view;
  }

  function trackColors(data) {
    var classes = {};
    return data.tracks.map(function (t) {
      if (t.kind === 'queue') { return QUEUE_COLOR; }
      if (t.kind === 'hbm') { return HBM_COLOR; }
      if (t.kind === 'link') {
        if (!(t['class'] in classes)) { classes[t['class']] = Object.keys(classes).length; }
        return LINK_COLORS[classes[t['class']] % LINK_COLORS.length];
      }
      var parts = t.name.split(' ');
      return ENGINE_COLORS[parts[parts.length - 1]] || '#607d8b';
    });
  }

  function messageTooltip(data, i) {
    var s = data.slices;
    var track = data.tracks[s.track[i]];
    var head = esc(track.name) + ' &middot; ' + fmtNs(s.start[i]) + ' + ' + fmtNs(s.dur[i]) +
      (s.critical[i] ? ' &middot; <b style="color:#d50000">on the critical path</b>' : '');
    if (s.count[i] > 1) {
      return head + '<br>' + s.count[i] + ' operations merged (the run is larger than the page ' +
        'shows in full)<br>' + fmtBytes(s.bytes[i]);
    }
    var op = data.ops[s.op[i]];
    /* [label, bytes, from, to, route, start, data end, end, overhead, id] */
    var streaming = op[6] - op[5];
    var lines = [head, '<b>' + esc(op[0]) + '</b> (operation ' + op[9] + ')', fmtBytes(op[1]) +
      (op[2] !== op[3] ? ', chip ' + op[2] + ' \u2192 chip ' + op[3] : '')];
    if (op[4]) { lines.push('route ' + esc(op[4])); }
    lines.push('first byte ' + fmtNs(op[5]) + ', last byte ' + fmtNs(op[6]) + ', end ' + fmtNs(op[7]) +
      (op[8] > 0 ? ' (after ' + fmtNs(op[8]) + ' message overhead)' : ''));
    lines.push('achieved ' + (streaming > 0 ? (op[1] / streaming).toFixed(1) + ' GB/s' : '-') +
      ' while streaming; ' + fmtNs(op[7] - op[6]) + ' hop latency');
    return '<div class="tip">' + lines.join('<br>') + '</div>';
  }

  function timelineBody(app, data, pathArrows) {
    var collective = data.kind === 'collective';
    var s = data.slices;
    var n = s.track.length;
    var items = new Array(n);
    for (var i = 0; i < n; i++) {
      items[i] = [s.track[i], s.start[i], s.start[i] + s.dur[i], i];
    }
    var names = data.tracks.map(function (t) { return t.name; });
    var colors = trackColors(data);
    var chart = chartBox(app, Math.min(900, 20 * names.length + 110));
    chart.on('finished', function () {
      if (errors.length === 0) { body.setAttribute('data-status', 'rendered'); }
    });
    function renderSlice(params, api) {
      var track = api.value(0);
      var from = api.coord([api.value(1), track]);
      var to = api.coord([api.value(2), track]);
      var height = api.size([0, 1])[1] * 0.7;
      var rect = echarts.graphic.clipRectByRect(
        { x: from[0], y: from[1] - height / 2, width: Math.max(to[0] - from[0], 0.6), height: height },
        { x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height });
      if (!rect) { return null; }
      var index = api.value(3);
      var critical = s.critical[index] === 1;
      return {
        type: 'rect', shape: rect,
        style: { fill: colors[track], stroke: critical ? '#d50000' : null, lineWidth: critical ? 1.5 : 0,
          opacity: picked.location !== null && sliceLocation(data, index) !== picked.location ? 0.12 :
            (s.count[index] > 1 ? 0.55 : 1) }
      };
    }
    function renderArrow(params, api) {
      var from = api.coord([api.value(1), api.value(0)]);
      var to = api.coord([api.value(3), api.value(2)]);
      var color = api.value(4) === 1 ? '#d50000' : 'rgba(60,60,60,0.45)';
      var angle = Math.atan2(to[1] - from[1], to[0] - from[0]);
      var head = 6;
      return {
        type: 'group', children: [
          { type: 'line', shape: { x1: from[0], y1: from[1], x2: to[0], y2: to[1] },
            style: { stroke: color, lineWidth: 1 } },
          { type: 'polygon', shape: { points: [to,
            [to[0] - head * Math.cos(angle - 0.4), to[1] - head * Math.sin(angle - 0.4)],
            [to[0] - head * Math.cos(angle + 0.4), to[1] - head * Math.sin(angle + 0.4)]] },
            style: { fill: color } }]
      };
    }
    chart.setOption({
      animation: false,
      grid: { left: 150, right: 40, top: 16, bottom: 70 },
      tooltip: {
        trigger: 'item', confine: true,
        formatter: function (p) {
          if (p.seriesIndex === 0) {
            return collective ? messageTooltip(data, p.value[3]) : sliceTooltip(data, p.value[3]);
          }
          return 'semaphore update at ' + fmtNs(p.value[1]) + ' released the wait at ' + fmtNs(p.value[3]);
        }
      },
      dataZoom: [
        { type: 'slider', xAxisIndex: 0, filterMode: 'weakFilter', height: 20, bottom: 12,
          labelFormatter: function (v) { return fmtNs(v); } },
        { type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter' },
        { type: 'slider', yAxisIndex: 0, filterMode: 'weakFilter', width: 14, right: 8,
          showDetail: false }
      ],
      xAxis: { type: 'value', min: 0, max: data.total_ns, scale: true,
        axisLabel: { formatter: function (v) { return fmtNs(v); } } },
      yAxis: { type: 'category', inverse: true, data: names, axisLabel: { fontSize: 11 } },
      series: [
        { type: 'custom', name: 'slices', renderItem: renderSlice, encode: { x: [1, 2], y: 0 },
          data: items, progressive: 20000, clip: true },
        { type: 'custom', name: 'arrows', renderItem: renderArrow, encode: { x: [1, 3], y: [0, 2] },
          data: pathArrows, clip: true, silent: false, z: 5 }
      ]
    });
    return {
      chart: chart, count: n, pathArrows: pathArrows,
      redraw: function () { chart.setOption({ series: [{ data: items }, {}] }); }
    };
  }

  function bandwidthChart(app, data) {
    add(app, 'h2', '', 'DMA bandwidth over time').id = 'bandwidth';
    var bw = data.bandwidth;
    var chart = chartBox(app, 240);
    var points = bw.gbps.map(function (v, i) { return [(i + 0.5) * bw.bin_ns, v]; });
    chart.setOption({
      animation: false,
      grid: { left: 70, right: 40, top: 20, bottom: 40 },
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return typeof v === 'number' ? v.toFixed(1) + ' GB/s' : v; } },
      xAxis: { type: 'value', min: 0, max: data.total_ns, axisLabel: { formatter: function (v) { return fmtNs(v); } } },
      yAxis: { type: 'value', name: 'GB/s',
        max: function (v) { return Math.ceil(Math.max(v.max, bw.peak_gbps) * 1.1 / 50) * 50; } },
      series: [{
        type: 'line', name: 'DMA bytes moved', data: points, showSymbol: false, step: 'middle',
        areaStyle: { opacity: 0.25 }, lineStyle: { width: 1 },
        markLine: { symbol: 'none', label: { formatter: 'DMA peak {c} GB/s', position: 'insideEndTop' },
          data: [{ yAxis: +bw.peak_gbps.toFixed(1) }] }
      }]
    });
    return chart;
  }

  function memoryChart(app, data) {
    add(app, 'h2', '', 'SBUF and PSUM in use').id = 'memory';
    add(app, 'div', 'hint', 'Inferred from the operands: a region an instruction or transfer ' +
      'writes is in use until its last access before another write overlaps it. Per stretch of ' +
      'the run, the largest use on any core, as a share of one core\'s capacity (' +
      Math.round(data.memory.sbuf_capacity_kib) + ' KiB SBUF, ' +
      Math.round(data.memory.psum_capacity_kib) + ' KiB PSUM).');
    var m = data.memory;
    var chart = chartBox(app, 220);
    function points(values, capacity) {
      return values.map(function (v, i) { return [(i + 0.5) * m.bin_ns, +(100 * v / capacity).toFixed(2)]; });
    }
    chart.setOption({
      animation: false,
      legend: { top: 2 },
      grid: { left: 70, right: 40, top: 30, bottom: 40 },
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return typeof v === 'number' ? v.toFixed(1) + ' %' : v; } },
      xAxis: { type: 'value', min: 0, max: data.total_ns, axisLabel: { formatter: function (v) { return fmtNs(v); } } },
      yAxis: { type: 'value', max: 100, axisLabel: { formatter: '{value} %' } },
      series: [
        { type: 'line', name: 'SBUF', data: points(m.sbuf_kib, m.sbuf_capacity_kib), showSymbol: false,
          step: 'middle', lineStyle: { width: 1.5 } },
        { type: 'line', name: 'PSUM', data: points(m.psum_kib, m.psum_capacity_kib), showSymbol: false,
          step: 'middle', lineStyle: { width: 1.5 } }
      ]
    });
    return chart;
  }

  function hotLines(app, data, timeline) {
    add(app, 'h2', '', 'Hot source lines').id = 'lines';
    add(app, 'div', 'hint', 'Busy time of each kernel line on each engine, and the time its ' +
      'transfers moved data (dma), over every executed instruction; share is of the sum. Click a ' +
      'line to pick out its slices in the timeline (merged slices dim too); click again to clear.');
    var wrap = add(app, 'div', 'scroll');
    var table = add(wrap, 'table');
    var head = '<tr><th class="loc">source line</th><th>total</th><th>share</th>';
    ENGINE_ORDER.forEach(function (e) { head += '<th>' + e + '</th>'; });
    head += '<th>waited</th><th>executions</th></tr>';
    var html = '<thead>' + head + '</thead><tbody>';
    data.lines.forEach(function (line) {
      html += '<tr data-loc="' + esc(line.location) + '"><td class="loc">' + esc(line.location) +
        '</td><td>' + fmtNs(line.total_ns) +
        '</td><td><span class="bar" style="width:' + Math.round(60 * line.share) + 'px"></span>' +
        pct(line.share) + '</td>';
      line.busy_ns.forEach(function (b) { html += '<td>' + (b > 0 ? fmtNs(b) : '') + '</td>'; });
      html += '<td>' + fmtNs(line.waited_ns) + '</td><td>' + line.executions + '</td></tr>';
    });
    table.innerHTML = html + '</tbody>';
    table.addEventListener('click', function (event) {
      var row = event.target.closest('tr[data-loc]');
      if (!row) { return; }
      var loc = row.getAttribute('data-loc');
      picked.location = picked.location === loc ? null : loc;
      Array.prototype.forEach.call(table.querySelectorAll('tr.picked'), function (r) {
        r.classList.remove('picked');
      });
      if (picked.location !== null) { row.classList.add('picked'); }
      timeline.redraw();
    });
  }

  function collectiveHeader(app, data) {
    var c = data.collective;
    add(app, 'h1', '', esc(data.title));
    add(app, 'div', 'meta', esc(data.chip) + ' &middot; ' + esc(c.op) + ' of ' + fmtBytes(c.bytes) +
      ' over ' + c.ranks + ' ranks &middot; ' + esc(c.algorithm) + ' &middot; ' + c.operations +
      ' operations, ' + c.messages + ' messages &middot; ' + fmtNs(data.total_ns) + ' simulated');
  }

  function algorithms(app, data) {
    add(app, 'h2', '', 'Algorithms').id = 'algorithms';
    add(app, 'div', 'hint', 'Every algorithm that applies is planned and timed on this fabric; ' +
      'the fastest is taken unless one was named.');
    var best = null;
    data.collective.candidates.forEach(function (c) {
      if (c.time_ns !== null && (best === null || c.time_ns < best)) { best = c.time_ns; }
    });
    var html = '<thead><tr><th class="loc">algorithm</th><th>time</th><th>against the fastest</th>' +
      '<th>messages</th><th class="loc">note</th></tr></thead><tbody>';
    data.collective.candidates.forEach(function (c) {
      html += '<tr' + (c.chosen ? ' class="picked"' : '') + '><td class="loc">' + esc(c.algorithm) +
        (c.chosen ? ' (taken)' : '') + '</td><td>' + (c.time_ns === null ? '-' : fmtNs(c.time_ns)) +
        '</td><td>' + (c.time_ns === null ? '' : (c.time_ns / best).toFixed(2) + 'x') + '</td><td>' +
        (c.time_ns === null ? '' : c.messages) + '</td><td class="loc">' + esc(c.skipped) + '</td></tr>';
    });
    add(add(app, 'div', 'scroll'), 'table').innerHTML = html + '</tbody>';
  }

  function utilisationChart(app, data) {
    add(app, 'h2', '', 'Busiest links over time').id = 'utilisation';
    add(app, 'div', 'hint', 'Bytes each resource carried per stretch of the run (each message ' +
      'spread evenly over its streaming time) against its bandwidth: the busiest links and the ' +
      'busiest HBM.');
    var u = data.utilisation;
    var chart = chartBox(app, 260);
    chart.setOption({
      animation: false,
      legend: { top: 2, type: 'scroll' },
      grid: { left: 70, right: 40, top: 34, bottom: 40 },
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return typeof v === 'number' ? v.toFixed(1) + ' %' : v; } },
      xAxis: { type: 'value', min: 0, max: data.total_ns, axisLabel: { formatter: function (v) { return fmtNs(v); } } },
      yAxis: { type: 'value', min: 0, max: 100, axisLabel: { formatter: '{value} %' } },
      series: u.series.map(function (line) {
        return { type: 'line', name: line.name, showSymbol: false, step: 'middle', lineStyle: { width: 1.2 },
          data: line.load.map(function (v, i) { return [(i + 0.5) * u.bin_ns, +(100 * v).toFixed(2)]; }) };
      })
    });
    return chart;
  }

  function resourceTable(app, data) {
    var r = data.resources;
    add(app, 'h2', '', 'Links and HBM').id = 'resources';
    add(app, 'div', 'hint', 'Load: bytes carried over makespan &times; bandwidth. Busy: the share ' +
      'of the run at least one message streamed through it. Per class over every resource that ' +
      'carried bytes (' + r.used + '), then the ' + r.rows.length + ' busiest one by one.');
    var html = '<thead><tr><th class="loc">class</th><th>resources</th><th>GB/s each</th>' +
      '<th>mean load</th><th>max load</th><th>mean busy</th><th>max busy</th></tr></thead><tbody>';
    r.classes.forEach(function (c) {
      html += '<tr><td class="loc">' + esc(c.name) + '</td><td>' + c.resources + '</td><td>' +
        c.gbps.toFixed(1) + '</td><td>' + pct(c.mean_load) + '</td><td>' + pct(c.max_load) +
        '</td><td>' + pct(c.mean_busy) + '</td><td>' + pct(c.max_busy) + '</td></tr>';
    });
    add(add(app, 'div', 'scroll'), 'table').innerHTML = html + '</tbody>';
    html = '<thead><tr><th class="loc">resource</th><th class="loc">class</th><th>bytes</th>' +
      '<th>load</th><th>busy</th></tr></thead><tbody>';
    r.rows.forEach(function (row) {
      html += '<tr><td class="loc">' + esc(row.name) + '</td><td class="loc">' + esc(row['class']) +
        '</td><td>' + fmtBytes(row.bytes) + '</td><td><span class="bar" style="width:' +
        Math.round(60 * Math.min(1, row.load)) + 'px"></span>' + pct(row.load) + '</td><td>' +
        pct(row.busy) + '</td></tr>';
    });
    add(add(app, 'div', 'scroll'), 'table').innerHTML = html + '</tbody>';
  }

  function collectivePage(app, data) {
    collectiveHeader(app, data);
    verdicts(app, data);
    algorithms(app, data);
    var timeline = timelineChart(app, data);
    var charts = [timeline.chart, utilisationChart(app, data)];
    resourceTable(app, data);
    return { timeline: timeline, charts: charts };
  }

  function corePage(app, data) {
    header(app, data);
    verdicts(app, data);
    var charts = [engineUsage(app, data)];
    var timeline = timelineChart(app, data);
    charts.push(timeline.chart, bandwidthChart(app, data), memoryChart(app, data));
    hotLines(app, data, timeline);
    return { timeline: timeline, charts: charts };
  }

  function main() {
    var data = JSON.parse(document.getElementById('trn-data').textContent);
    var app = document.getElementById('app');
    var page = data.kind === 'collective' ? collectivePage(app, data) : corePage(app, data);
    var charts = page.charts;
    var timeline = page.timeline;
    window.addEventListener('resize', function () {
      charts.forEach(function (c) { c.resize(); });
    });
    body.setAttribute('data-slices', String(timeline.count));
    var drawn = timeline.chart.getModel().getSeriesByIndex(0).getData().count();
    body.setAttribute('data-drawn', String(drawn));
  }

  try {
    main();
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
})();
