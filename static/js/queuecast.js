/* Queuecast pages: charts from JSON specs, live progress of long runs, runs started
   through the API. No inline scripts; every page loads this one file after Chart.js. */
(function () {
  "use strict";

  var UNITS = [["y", 31536000], ["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];

  /* 7800 -> "2 h 10 min" (the same rule as queuecast/humanize.py) */
  function duration(seconds) {
    if (seconds === null || seconds === undefined || isNaN(seconds)) return "–";
    var sign = seconds < 0 ? "-" : "";
    var abs = Math.abs(seconds);
    if (abs < 9.95 && Math.abs(abs - Math.round(abs)) >= 0.05) return sign + abs.toFixed(1) + " s";
    var left = Math.floor(Math.abs(seconds) + 0.5);
    if (left < 60) return sign + left + " s";
    for (var k = 0; k < UNITS.length - 1; k++) {
      if (left >= UNITS[k][1]) {
        var small = UNITS[k + 1][1];
        var total = Math.floor(left / small + 0.5);
        var ratio = UNITS[k][1] / small;
        var count = Math.floor(total / ratio), rest = total % ratio;
        return sign + count + " " + UNITS[k][0] + (rest ? " " + rest + " " + UNITS[k + 1][0] : "");
      }
    }
    return sign + left + " s";
  }
  window.qcDuration = duration;

  /* "2h 30min", "1:30", "90 min", "45" (seconds) -> seconds; the same rule as
     queuecast/humanize.py parse_duration, so every form takes times in one style. */
  var PARSE_UNITS = { s: 1, sec: 1, secs: 1, second: 1, seconds: 1, m: 60, min: 60, mins: 60,
    minute: 60, minutes: 60, h: 3600, hr: 3600, hrs: 3600, hour: 3600, hours: 3600,
    d: 86400, day: 86400, days: 86400 };
  function parseDuration(text) {
    var raw = String(text).trim().toLowerCase();
    if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw);
    if (/^\d+(:\d{1,2}){1,2}$/.test(raw)) {
      var pieces = raw.split(":"), total = 0;
      pieces.forEach(function (p) { total = total * 60 + Number(p); });
      return total * (pieces.length === 2 ? 60 : 1);
    }
    var part = /(\d+(?:\.\d+)?)\s*([a-z]+)/g, sum = 0, found = false, m;
    while ((m = part.exec(raw)) !== null) {
      if (!(m[2] in PARSE_UNITS)) { found = false; break; }
      sum += Number(m[1]) * PARSE_UNITS[m[2]];
      found = true;
    }
    if (found && raw.replace(/(\d+(?:\.\d+)?)\s*([a-z]+)/g, "").trim() === "") return sum;
    throw new Error("'" + text + "' is not a duration: write seconds (3600), h:mm (1:30), " +
                    "h:mm:ss or '2h 30min'");
  }
  window.qcParseDuration = parseDuration;

  function percent(v) { return Math.round(v * 100) + "%"; }

  /* Round durations for axis ticks and bounds: 1 s ... 30 s, 1 min ... 30 min, 1 h, 2 h,
     3 h, 6 h, 12 h, 1 d, 2 d, 1 w, 2 w, 30 d, 90 d, 180 d, 1 y. */
  var ROUND_S = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200,
                 10800, 21600, 43200, 86400, 172800, 604800, 1209600, 2592000, 7776000,
                 15552000, 31536000];
  /* Log axes: the coarsest list of marks that puts at least 3 ticks on the axis. */
  var LOG_MARKS = [
    [1, 10, 60, 600, 3600, 86400, 604800, 2592000, 31536000],
    [1, 10, 60, 600, 3600, 21600, 86400, 604800, 2592000, 31536000],
    [1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 604800,
     2592000, 7776000, 31536000],
    ROUND_S
  ];

  var UNIT_S = [31536000, 86400, 3600, 60, 1];

  /* The tick step: a round duration that is a whole number of the largest unit the axis
     reaches (ticks "1 d, 2 d", never "1 d 12 h") when that fits; else the finest that fits. */
  function linearStep(lo, hi, most) {
    var span = hi - lo, unit = 1;
    for (var u = 0; u < UNIT_S.length; u++) { if (hi >= UNIT_S[u]) { unit = UNIT_S[u]; break; } }
    for (var k = 0; k < ROUND_S.length; k++) {
      var step = ROUND_S[k];
      var steps = Math.ceil(hi / step) - Math.floor(lo / step);
      if (step % unit === 0 && span / step <= most && steps >= 2) return step;
    }
    for (k = 0; k < ROUND_S.length; k++) {
      if (span / ROUND_S[k] <= most) return ROUND_S[k];
    }
    var year = ROUND_S[ROUND_S.length - 1];
    return year * Math.ceil(span / year / most);
  }

  function logTicks(lo, hi) {
    var inside = [];
    for (var level = 0; level < LOG_MARKS.length; level++) {
      inside = LOG_MARKS[level].filter(function (v) { return v >= lo && v <= hi; });
      if (inside.length >= 3) break;
    }
    return inside;
  }

  function tickRoom(scale) {
    var length = scale.isHorizontal() ? scale.width : scale.height;
    return Math.max(3, Math.floor(length / (scale.isHorizontal() ? 75 : 32)));
  }

  /* A duration axis (linear or logarithmic) with round bounds and round ticks: 1 h, 2 h,
     1 d, never "1 h 7 min". Chart.js calls these hooks after reading the data's range. */
  function roundDurationAxis(axis) {
    axis.bounds = "data";  /* keep the round ends set below (Chart.js's "ticks" would not) */
    axis.afterDataLimits = function (scale) {
      var lo = Math.max(scale.min, 0), hi = Math.max(scale.max, lo + 1);
      if (scale.type === "logarithmic") {
        lo = Math.max(lo, 1);
        scale.min = ROUND_S.filter(function (v) { return v <= lo; }).pop() || 1;
        scale.max = ROUND_S.filter(function (v) { return v >= hi; })[0] || hi;
        return;
      }
      var step = linearStep(axis.beginAtZero === false ? lo : 0, hi, tickRoom(scale));
      scale.qcStep = step;
      scale.min = axis.beginAtZero === false ? Math.floor(lo / step) * step : 0;
      scale.max = Math.ceil(hi / step) * step;
    };
    axis.afterBuildTicks = function (scale) {
      var values = [];
      if (scale.type === "logarithmic") {
        values = logTicks(scale.min, scale.max);
      } else {
        for (var v = scale.min; v <= scale.max + 1e-9; v += scale.qcStep) values.push(v);
      }
      scale.ticks = values.map(function (v) { return { value: v }; });
    };
  }

  function axisCallbacks(spec) {
    var qc = spec.qc || {};
    var scales = (spec.options = spec.options || {}).scales = spec.options.scales || {};
    (qc.durationAxes || []).forEach(function (axis) {
      scales[axis] = scales[axis] || {};
      scales[axis].ticks = scales[axis].ticks || {};
      scales[axis].ticks.callback = function (value) { return duration(value); };
      roundDurationAxis(scales[axis]);
    });
    (qc.percentAxes || []).forEach(function (axis) {
      scales[axis] = scales[axis] || {};
      scales[axis].ticks = scales[axis].ticks || {};
      scales[axis].ticks.callback = function (value) { return percent(value); };
    });
    if (qc.tooltip === "duration" || qc.tooltip === "percent") {
      var fmt = qc.tooltip === "duration" ? duration : percent;
      spec.options.plugins = spec.options.plugins || {};
      var callbacks = {
        label: function (ctx) {
          if (ctx.dataset.qcMarker !== undefined) return ctx.dataset.label;
          var y = ctx.parsed.y;
          var f = (ctx.dataset.qcFormat === "percent") ? percent : fmt;
          return (ctx.dataset.label ? ctx.dataset.label + ": " : "") + f(y);
        }
      };
      if (qc.tooltipX === "duration") {
        callbacks.title = function (items) {
          return items.length ? "at " + duration(items[0].parsed.x) : "";
        };
      }
      spec.options.plugins.tooltip = { callbacks: callbacks };
    }
  }

  function drawCharts() {
    if (!window.Chart) return;
    document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
      var source = document.getElementById(canvas.getAttribute("data-chart"));
      if (!source) return;
      var spec = JSON.parse(source.textContent);
      spec.options = spec.options || {};
      spec.options.responsive = true;
      spec.options.maintainAspectRatio = false;
      spec.options.animation = false;
      axisCallbacks(spec);
      delete spec.qc;
      canvas.qcChart = new window.Chart(canvas, spec);
      canvas.setAttribute("data-drawn", "1");
    });
  }

  function csrfToken() {
    var m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (m) return decodeURIComponent(m[1]);
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function showProgress(box, status, progress, error) {
    var bar = box.querySelector("progress");
    var text = box.querySelector("[data-status]");
    if (bar) {
      if (progress === null) bar.removeAttribute("value"); else bar.value = progress;
    }
    if (text) {
      text.textContent = status + (progress === null ? "" : " · " + percent(progress || 0));
      text.className = "status-" + status;
    }
    var err = box.querySelector("[data-error]");
    if (err && error) { err.textContent = error; err.hidden = false; }
  }

  /* A run's page: poll its API address until done/failed, then reload to draw the results. */
  function pollRun(box) {
    var url = box.getAttribute("data-poll-url");
    var every = Number(box.getAttribute("data-poll-ms") || 1000);
    function tick() {
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (row) {
          showProgress(box, row.status, row.progress, row.error);
          if (row.status === "done" || row.status === "failed") {
            window.location.reload();
          } else {
            window.setTimeout(tick, every);
          }
        })
        .catch(function () { window.setTimeout(tick, every * 2); });
    }
    tick();
  }

  /* The form as the API's JSON: numbers as numbers, single checkboxes as booleans,
     fields marked data-list="1" (checkbox groups) as lists. */
  function formJson(form) {
    var body = {};
    form.querySelectorAll("input, select, textarea").forEach(function (el) {
      var key = el.name;
      if (!key || key === "csrfmiddlewaretoken") return;
      if (el.getAttribute("data-list") === "1") {
        body[key] = body[key] || [];
        if (el.checked) body[key].push(el.value);
        return;
      }
      if (el.type === "checkbox") { body[key] = el.checked; return; }
      if (el.value === "") return;
      var seconds = el.getAttribute("data-seconds-field");
      if (seconds) {  /* "2h" typed, the API's seconds sent */
        try {
          body[seconds] = Math.round(parseDuration(el.value));
        } catch (err) {
          throw new Error(labelOf(form, key) + ": " + err.message);
        }
        return;
      }
      body[key] = el.type === "number" ? Number(el.value) : el.value;
    });
    return body;
  }

  /* The form field behind an API field name (a seconds field typed as "2h" included). */
  function fieldOf(form, apiName) {
    if (!form) return null;
    return form.querySelector("[data-seconds-field='" + apiName + "']") ||
      form.querySelector("[name='" + apiName + "']");
  }

  function labelOf(form, apiName) {
    var el = fieldOf(form, apiName);
    var label = el && el.id ? form.querySelector("label[for='" + el.id + "']") : null;
    return label ? label.textContent.trim() : apiName;
  }

  /* A form that starts a long run through the API (202 + the row); while the POST is in
     flight (the embedded mode runs the task inside it) the newest run of the list shows
     its progress; then the run's own page takes over. */
  function startRunForm(form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var box = document.getElementById(form.getAttribute("data-progress-box"));
      var button = form.querySelector("button[type=submit]");
      if (button) button.disabled = true;
      box.hidden = false;
      showProgress(box, "starting", null, "");
      var started = Date.now(), done = false;
      var listUrl = form.getAttribute("data-list-url");
      function watch() {
        if (done || !listUrl) return;
        fetch(listUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
          .then(function (r) { return r.json(); })
          .then(function (page) {
            var rows = page.results || page;
            var row = rows && rows[0];
            if (!done && row && Date.parse(row.created_at) >= started - 5000) {
              showProgress(box, row.status, row.progress, row.error);
            }
          })
          .catch(function () { /* the POST's answer decides */ })
          .then(function () { if (!done) window.setTimeout(watch, 700); });
      }
      window.setTimeout(watch, 400);
      var body;
      try {
        body = formJson(form);
      } catch (err) {
        done = true;
        showProgress(box, "failed", 0, err.message);
        if (button) button.disabled = false;
        return;
      }
      var apiUrl = form.getAttribute("data-api-url").replace(/\{(\w+)\}/g, function (_, name) {
        var value = body[name];
        delete body[name];
        return encodeURIComponent(value);
      });
      fetch(apiUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json",
                   "X-CSRFToken": csrfToken() },
        body: JSON.stringify(body)
      }).then(function (r) {
        return r.json().then(function (body) { return { ok: r.ok, body: body }; });
      }).then(function (answer) {
        done = true;
        if (!answer.ok) {
          showProgress(box, "failed", 0, messageOf(answer.body, form));
          if (button) button.disabled = false;
          return;
        }
        var next = form.getAttribute("data-next-url").replace("{id}", String(answer.body.id));
        window.location.assign(next);
      }).catch(function (err) {
        done = true;
        showProgress(box, "failed", 0, String(err));
        if (button) button.disabled = false;
      });
    });
  }

  /* An API error in the form's words: the field's label, and for a time typed as "2h" the
     numbers of the message as durations ("at most 7 d", not "604800"). */
  function messageOf(body, form) {
    if (!body) return "request failed";
    if (body.detail) return body.detail;
    return Object.keys(body).map(function (k) {
      var v = body[k];
      var text = Array.isArray(v) ? v.join(" ") : (typeof v === "object" ? JSON.stringify(v) : String(v));
      var el = fieldOf(form, k);
      if (el && el.getAttribute("data-seconds-field") === k) {
        text = text.replace(/(\d+(?:\.\d+)?(?:e[+-]?\d+)?)(\s*s\b)?/gi, function (_, n) {
          return duration(Number(n));
        });
      }
      return (el ? labelOf(form, k) : k) + ": " + text;
    }).join("; ");
  }

  /* Buttons that POST to an API address and then reload (release, cancel). */
  function actionButton(button) {
    button.addEventListener("click", function () {
      var question = button.getAttribute("data-confirm");
      if (question && !window.confirm(question)) return;
      button.disabled = true;
      fetch(button.getAttribute("data-api-post"), {
        method: "POST", credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRFToken": csrfToken() }
      }).then(function (r) {
        return r.json().then(function (body) { return { ok: r.ok, body: body }; });
      }).then(function (answer) {
        if (!answer.ok) {
          var out = document.getElementById(button.getAttribute("data-error-box"));
          if (out) { out.textContent = messageOf(answer.body); out.hidden = false; }
          button.disabled = false;
          return;
        }
        window.location.reload();
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    drawCharts();
    document.querySelectorAll("[data-poll-url]").forEach(pollRun);
    document.querySelectorAll("form[data-api-url]").forEach(startRunForm);
    document.querySelectorAll("button[data-api-post]").forEach(actionButton);
    document.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
      });
    });
    document.querySelectorAll("[data-duration-s]").forEach(function (el) {
      el.textContent = duration(Number(el.getAttribute("data-duration-s")));
    });
  });
})();
