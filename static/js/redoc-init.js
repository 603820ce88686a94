/* Starts ReDoc on the schema (settings from the page's JSON, no inline script). */
(function () {
  "use strict";
  var box = document.getElementById("redoc-container");
  var source = document.getElementById("redoc-settings");
  var settings = source ? JSON.parse(source.textContent) : {};
  window.Redoc.init(box.getAttribute("data-schema-url"), settings, box);
})();
