// Runs the scripted model in its own process, so serving never competes with the measured client
// for its event loop. Prints `ready <origin>` once listening; exits when stdin closes.
import { startAgentsServer } from './server.mjs'

const { origin, close } = await startAgentsServer()
process.stdout.write(`ready ${origin}\n`)
process.stdin.resume()
process.stdin.on('end', async () => {
  await close()
  process.exit(0)
})
