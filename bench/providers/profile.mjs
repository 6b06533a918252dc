// Profiles one measured run the way worker.mjs measures it: same warm-up, and the CPU profiler
// runs only from just before the request to the end of the stream.
// Run: node bench/providers/profile.mjs <client> <wire> <scenario> <origin> <out.cpuprofile>
// against a server from `node bench/providers/server-process.mjs` (it prints its origin).
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { clientByName } from './clients/index.mjs'
import { warmHttpParser } from './warm-up.mjs'

const [client, wire, scenario, origin, out] = process.argv.slice(2)
const { prepare } = await clientByName(client).load()
const run = await prepare({ wire, origin, scenario })
await warmHttpParser(origin)

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.setSamplingInterval', { interval: 50 })
await session.post('Profiler.start')
await run()
const { profile } = await session.post('Profiler.stop')
writeFileSync(out, JSON.stringify(profile))
process.exit(0)
