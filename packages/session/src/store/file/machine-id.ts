import { readFile } from 'node:fs/promises'

/**
 * Reads the id of this machine, the same across its boots and different from every other
 * machine's (hostnames are not: containers and cloned hosts share them); `undefined` where there
 * is none to read. Injected into the lock so that tests can play another machine.
 */
export type MachineIdReader = () => Promise<string | undefined>

/**
 * Where systemd keeps the machine id, then where D-Bus does on hosts without systemd: a random id
 * drawn at install. Read wherever they exist (some BSDs have one too).
 */
const MACHINE_ID_FILES = ['/etc/machine-id', '/var/lib/dbus/machine-id']

/**
 * The first machine id found; `undefined` when none is readable (most container images ship
 * none). An empty file, or systemd's `uninitialized` placeholder of an early boot, is no id.
 */
export const readMachineId: MachineIdReader = async () => {
  for (const file of MACHINE_ID_FILES) {
    let id: string
    try {
      id = (await readFile(file, 'utf8')).trim()
    } catch {
      continue
    }
    if (id !== '' && id !== 'uninitialized') return id
  }
  return undefined
}
