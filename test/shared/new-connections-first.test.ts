import { describe, expect, it } from "vitest";
import { NewConnectionsFirst } from "../../src/shared/new-connections-first.js";

/** One turn of the event loop: the gate's turn, scheduled before this one, has run by then. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A clock that stands still: a webhook never reaches the 100 ms after which it is served whatever
 * comes in, however long the machine takes over these turns (that rule has its own test, with its own clock).
 */
const still = () => 0;

/** Requests on `connection`, counted as they are served. */
function requests(gate: NewConnectionsFirst) {
  const served: string[] = [];
  const send = (connection: object, name: string) => void gate.turn(connection).then(() => served.push(name));
  return { served, send };
}

/** Until everything waiting is served (at most 20 turns). */
async function drained(gate: NewConnectionsFirst): Promise<number> {
  for (let turns = 1; turns <= 20; turns++) {
    await nextTurn();
    if (gate.queued === 0) return turns;
  }
  throw new Error("still waiting after 20 turns");
}

describe("NewConnectionsFirst", () => {
  it("serves every webhook on open connections in the next turn", async () => {
    const gate = new NewConnectionsFirst(still);
    const { served, send } = requests(gate);
    const [a, b] = [{}, {}];
    send(a, "a1");
    send(b, "b1");
    await drained(gate);
    send(a, "a2");
    send(b, "b2");
    send(a, "a3");
    expect(served).toEqual(["a1", "b1"]);
    await nextTurn();
    expect(served).toEqual(["a1", "b1", "a2", "b2", "a3"]);
  });

  it("lets new connections be accepted first: no webhook work for eight turns, then one, in arrival order", async () => {
    const gate = new NewConnectionsFirst(still);
    const { served, send } = requests(gate);
    const open = {};
    send(open, "first");
    await drained(gate);
    send(open, "waiting-1");
    send(open, "waiting-2");
    const perTurn: number[] = [];
    for (let turn = 1; turn <= 10; turn++) {
      send({}, `new-${turn}`); // a connection not seen before, every turn
      const before = served.length;
      await nextTurn();
      perTurn.push(served.length - before);
    }
    expect(perTurn).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    expect(served.slice(1)).toEqual(["waiting-1"]);
  });

  it("serves everything waiting in the first turn no new connection comes in", async () => {
    const gate = new NewConnectionsFirst(still);
    const { served, send } = requests(gate);
    for (let n = 1; n <= 5; n++) send({}, `new-${n}`);
    await nextTurn();
    expect(served).toEqual([]);
    await nextTurn();
    expect(served).toEqual(["new-1", "new-2", "new-3", "new-4", "new-5"]);
    expect(gate.queued).toBe(0);
  });

  it("serves a webhook that has waited 100 ms even while new connections keep coming", async () => {
    let now = 0;
    const gate = new NewConnectionsFirst(() => now);
    const { served, send } = requests(gate);
    send({}, "old");
    now = 99;
    send({}, "new-1");
    await nextTurn();
    expect(served).toEqual([]);
    now = 100;
    send({}, "new-2");
    await nextTurn();
    expect(served).toEqual(["old"]);
    send({}, "new-3");
    await nextTurn();
    expect(served).toEqual(["old"]); // new-1 has waited 1 ms
    now = 199;
    send({}, "new-4");
    await nextTurn();
    expect(served).toEqual(["old", "new-1"]);
  });
});
