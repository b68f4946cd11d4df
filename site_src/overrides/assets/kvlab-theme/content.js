/* material 9.7.6's inline content script (partials/javascripts/content.html), moved to a file for the Content-Security-Policy. */
var target=document.getElementById(location.hash.slice(1));target&&target.name&&(target.checked=target.name.startsWith("__tabbed_"))
