/* ReDoc's bundle draws the "API docs by Redocly" logo from the vendor's CDN, which this
   service never loads from: point that one image at our own icon instead (loaded before
   the bundle, so the CDN address is never requested). */
(function () {
  "use strict";
  var CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
  var LOCAL = "/static/img/favicon.svg";
  var setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (name === "src" && value === CDN_LOGO) value = LOCAL;
    return setAttribute.call(this, name, value);
  };
  var descriptor = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    get: descriptor.get,
    set: function (value) { descriptor.set.call(this, value === CDN_LOGO ? LOCAL : value); },
    configurable: true
  });
})();
