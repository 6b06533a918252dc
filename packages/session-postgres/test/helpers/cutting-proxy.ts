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
   * it; with `down`, every connection after the cut is refused too (the database out of reach).
   */
  arm(marker: string, when: 'before' | 'after', down?: 'down'): void
  /** How many connections were cut so far. */
  cuts(): number
  close(): Promise<void>
}

export async function startCuttingProxy(databaseUrl: string): Promise<CuttingProxy> {
  const target = new URL(databaseUrl)
  let armed: { marker: string; when: 'before' | 'after'; down: boolean } | undefined
  let down = false
  let cuts = 0
  const sockets = new Set<Socket>()
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
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.toString('latin1').includes(armed.marker)) {
        const { when } = armed
        down = armed.down
        armed = undefined
        if (when === 'before') return cut()
        awaitingAnswer = true
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (awaitingAnswer) return cut()
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
    cuts: () => cuts,
    close() {
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
