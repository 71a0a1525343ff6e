window.cuscopeErrors = [];
window.cuscopeRecordError = function (text) {
  text = String(text);
  window.cuscopeErrors.push(text);
  var box = document.getElementById('script-errors');
  if (box) {
    var line = document.createElement('div');
    line.textContent = text;
    box.appendChild(line);
  }
  if (document.body) document.body.dataset.rendered = 'error';
};
window.onerror = function (message, source, line, column) {
  window.cuscopeRecordError('script error: ' + message + (line ? ' (line ' + line + ', column ' + column + ')' : ''));
  return false;
};
window.addEventListener('unhandledrejection', function (event) {
  window.cuscopeRecordError('unhandled rejection: ' + (event.reason && event.reason.message || event.reason));
});
