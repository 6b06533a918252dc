// Preloaded into a reference server by the tests to make it stubborn: it ignores SIGTERM and stays
// alive after its stdin closes, so only SIGKILL stops it.
process.on('SIGTERM', () => {})
setInterval(() => {}, 1 << 30)
