import { createServer, type Socket, connect as tcpConnect } from 'node:net'

/**
 * A TCP proxy in front of the test Postgres that forwards real wire bytes and, once armed, cuts
 * the connection that sends a statement containing `marker`: before Postgres gets it, or after
 * Postgres got it and answered (the answer is dropped). The pg client sends a statement and its
 * Sync together and Postgres answers only after it committed, so a cut `after` loses the
 * acknowledgement of a committed statement.
 */
export interface CuttingProxy {
  /** A connection string to the database through the proxy. */
  url: string
  /**
   * Cuts the next connection sending `marker`, `before` forwarding it or `after` Postgres answered
   * it, or (`stall`) stalls it instead of forwarding it, as `stallListening` stalls a connection; with `down`, every connection after the cut is refused too (the database out of reach).
   */
  arm(marker: string, when: 'before' | 'after' | 'stall', down?: 'down'): void
  /**
   * Ends the next new connection as a server ending it just after it became ready does: its
   * first ReadyForQuery and a FATAL `57P01` error (`pg_terminate_backend`) in one write, then
   * the close.
   */
  endOnceReady(): void
  /**
   * Stalls every open connection that sent a `LISTEN`: from now on nothing is forwarded either way
   * and nothing is closed, as when a network path dies silently (no reset reaches either side).
   * Connections made later are forwarded as usual.
   */
  stallListening(): void
  /** How many statements containing `marker` clients sent so far (through any connection). */
  sent(marker: string): number
  /** How many connections were cut so far. */
  cuts(): number
  close(): Promise<void>
}

/** ReadyForQuery, idle: the server waits for a statement. */
const READY = Buffer.from([0x5a, 0, 0, 0, 5, 0x49])

/** The ErrorResponse a backend ended by `pg_terminate_backend` sends before it closes. */
const TERMINATED = (() => {
  const fields = Buffer.from(
    'SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0',
    'latin1',
  )
  const header = Buffer.alloc(5)
  header.write('E', 0, 'latin1')
  header.writeInt32BE(fields.length + 4, 1)
  return Buffer.concat([header, fields])
})()

export async function startCuttingProxy(databaseUrl: string): Promise<CuttingProxy> {
  const target = new URL(databaseUrl)
  let armed: { marker: string; when: 'before' | 'after' | 'stall'; down: boolean } | undefined
  let endReady = false
  let down = false
  let cuts = 0
  const sockets = new Set<Socket>()
  /** Stalls a connection that listened, by connection. */
  const listening = new Set<() => void>()
  const chunks: string[] = []
  const server = createServer((client) => {
    if (down) {
      client.destroy()
      return
    }
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {})
    }
    const cut = () => {
      cuts++
      client.destroy()
      upstream.destroy()
    }
    let awaitingAnswer = false
    let stalled = false
    const endWhenReady = endReady
    endReady = false
    client.on('data', (chunk: Buffer) => {
      if (stalled) return
      chunks.push(chunk.toString('latin1'))
      // The store's LISTEN statement (`listen "<channel>"`).
      if (chunk.toString('latin1').includes('listen "'))
        listening.add(() => {
          stalled = true
        })
      if (armed && chunk.toString('latin1').includes(armed.marker)) {
        const { when } = armed
        down = armed.down
        armed = undefined
        if (when === 'before') return cut()
        if (when === 'stall') {
          stalled = true
          return
        }
        awaitingAnswer = true
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (stalled) return
      if (awaitingAnswer) return cut()
      if (endWhenReady && chunk.includes(READY)) {
        client.write(Buffer.concat([chunk, TERMINATED]))
        return cut()
      }
      client.write(chunk)
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (typeof address !== 'object' || !address) throw new Error('the proxy has no address')
  const url = new URL(databaseUrl)
  url.hostname = '127.0.0.1'
  url.port = String(address.port)
  return {
    url: url.toString(),
    arm(marker, when, andDown) {
      armed = { marker, when, down: andDown === 'down' }
    },
    endOnceReady() {
      endReady = true
    },
    stallListening() {
      for (const stall of listening) stall()
      listening.clear()
    },
    sent: (marker) => chunks.filter((chunk) => chunk.includes(marker)).length,
    cuts: () => cuts,
    close() {
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
