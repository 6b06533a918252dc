import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/**
 * Starts a bench server (by default the providers' one) in its own process; resolves to its
 * origin and a `stop` function. The script prints `ready <origin>` and exits when stdin closes.
 */
export async function startServerProcess(scriptUrl = new URL('./server-process.mjs', import.meta.url)) {
  const script = fileURLToPath(scriptUrl)
  const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] })
  const [line] = await once(createInterface({ input: child.stdout }), 'line')
  if (!line.startsWith('ready ')) throw new Error(`bench server said: ${line}`)
  return {
    origin: line.slice('ready '.length),
    stop: async () => {
      // Closing its stdin is the server's signal to close and exit.
      child.stdin.end()
      await once(child, 'exit')
    },
  }
}
