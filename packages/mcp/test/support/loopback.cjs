// Preloaded (node --require) into a reference MCP server started over HTTP by the tests. The
// server listens on the port in PORT on every interface and has no host setting: this binds it to
// 127.0.0.1 instead, and prints the port it got (PORT=0 picks a free one) for the test to read.
const net = require('node:net')

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    const port = Number(args[0])
    const rest = args.slice(1).filter((arg) => typeof arg === 'function')
    this.once('listening', () => process.stderr.write(`KODE_TEST_PORT=${this.address().port}\n`))
    return listen.call(this, port, '127.0.0.1', ...rest)
  }
  return listen.apply(this, args)
}
