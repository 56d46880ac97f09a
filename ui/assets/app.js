// Auto-refresh of the pages that ask for it (data-refresh on <body>),
// with a button that pauses it. No other script runs in the UI.
(function () {
  var body = document.body;
  var seconds = parseInt(body.getAttribute("data-refresh") || "0", 10);
  var button = document.getElementById("refresh-toggle");
  if (!seconds || !button) { if (button) { button.hidden = true; } return; }
  var paused = sessionStorage.getItem("leasegen-refresh-paused") === "1";
  var timer = null;
  function arm() {
    button.textContent = paused ? "resume refresh" : "pause refresh (" + seconds + "s)";
    if (timer) { clearTimeout(timer); timer = null; }
    if (!paused) { timer = setTimeout(function () { location.reload(); }, seconds * 1000); }
  }
  button.addEventListener("click", function () {
    paused = !paused;
    sessionStorage.setItem("leasegen-refresh-paused", paused ? "1" : "0");
    arm();
  });
  arm();
})();
