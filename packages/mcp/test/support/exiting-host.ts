// A host that connects to the scripted server (argv[2]) in `helper` mode, prints the server's and
// the helper's pids on stdout, and exits without closing the connection.
import { connectMcpServer } from '@kode/mcp'

const scripted = process.argv[2]!
let said = ''
let heard: (pid: string) => void = () => {}
const helper = new Promise<string>((resolve) => {
  heard = resolve
})
const connection = await connectMcpServer({
  name: 'left',
  command: process.execPath,
  args: [scripted, '[]', '{}', 'helper'],
  onStderr: (text) => {
    said += text
    const pid = /helper=(\d+)/.exec(said)?.[1]
    if (pid) heard(pid)
  },
})
process.stdout.write(`server=${connection.pid} helper=${await helper}\n`)
process.exit(0)
