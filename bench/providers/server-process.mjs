// Runs the bench server as its own process, so serving never competes with the measured client
// for its event loop. Prints `ready <origin>` once listening; exits when stdin closes.
import { startBenchServer } from './server.mjs'

const { origin, close } = await startBenchServer()
process.stdout.write(`ready ${origin}\n`)
process.stdin.resume()
process.stdin.on('end', async () => {
  await close()
  process.exit(0)
})
