import type { Worker } from 'node:cluster';
import type pino from 'pino';
import { isMessage, sendToWorker } from './ipc.js';

/*
 * Worker to worker, through the primary:
 * - a question (Ask) goes to every other worker (Question); each answers with
 *   what its answerer for that question returns (Answer); the primary sends
 *   the asker every answer (Answers) once all came or PEER_ANSWER_MS passed;
 * - a note (Tell) goes to every other worker (Told); nobody answers.
 */
interface Ask {
  type: 'sift:ask';
  id: number;
  question: string;
}
interface Question {
  type: 'sift:question';
  order: number;
  question: string;
}
interface Answer {
  type: 'sift:answer';
  order: number;
  answer: unknown;
}
interface Answers {
  type: 'sift:answers';
  id: number;
  answers: unknown[];
}
interface Tell {
  type: 'sift:tell';
  topic: string;
  body: unknown;
}
interface Told {
  type: 'sift:told';
  topic: string;
  body: unknown;
}

/** How long a worker waits for the others' answers before it goes on with those it has. */
export const PEER_ANSWER_MS = 500;

/** The other server processes of this cluster, as one worker sees them. */
export interface Peers {
  /** Every other worker's answer to `question` (those that answered within PEER_ANSWER_MS). */
  ask(question: string): Promise<unknown[]>;
  /** Answers the other workers' `question` with what `answerer` returns (null if it throws). */
  answer(question: string, answerer: () => unknown): void;
  /** Sends `body` to every other worker's `hear(topic)`. */
  tell(topic: string, body: unknown): void;
  hear(topic: string, listener: (body: unknown) => void): void;
}

/** In a worker: the peers, through the primary. */
export function workerPeers(): Peers {
  let next = 0;
  const waiting = new Map<number, (answers: unknown[]) => void>();
  const answerers = new Map<string, () => unknown>();
  const listeners = new Map<string, (body: unknown) => void>();
  const send = (msg: Ask | Answer | Tell) => {
    if (process.connected) process.send?.(msg);
  };
  process.on('message', (msg: unknown) => {
    if (isMessage<Answers>(msg, 'sift:answers')) return waiting.get(msg.id)?.(msg.answers);
    if (isMessage<Told>(msg, 'sift:told')) return listeners.get(msg.topic)?.(msg.body);
    if (!isMessage<Question>(msg, 'sift:question')) return;
    const answerer = answerers.get(msg.question);
    Promise.resolve()
      .then(() => (answerer ? answerer() : null))
      .catch(() => null)
      .then((answer) => send({ type: 'sift:answer', order: msg.order, answer }));
  });
  const peers: Peers = {
    ask(question) {
      if (!process.connected || !process.send) return Promise.resolve([]);
      const id = ++next;
      return new Promise((resolve) => {
        const done = (answers: unknown[]) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(answers);
        };
        // The primary answers within PEER_ANSWER_MS; this bounds a primary that is gone.
        const timer = setTimeout(() => done([]), PEER_ANSWER_MS + 100);
        waiting.set(id, done);
        send({ type: 'sift:ask', id, question });
      });
    },
    answer(question, answerer) {
      answerers.set(question, answerer);
    },
    tell(topic, body) {
      send({ type: 'sift:tell', topic, body });
    },
    hear(topic, listener) {
      listeners.set(topic, listener);
    },
  };
  return peers;
}

/** In the primary: passes the workers' questions, answers and notes on to the other workers. */
export class PeerRelay {
  /** Relayed questions still waiting for workers, by their order number: called with each answer. */
  private readonly questions = new Map<number, (answer: unknown) => void>();
  /** The last order number given to a relayed question. */
  private orders = 0;

  /** `workers`: the primary's workers at the moment a message comes. */
  constructor(
    private readonly workers: () => Worker[],
    private readonly log: pino.Logger,
  ) {}

  /** Relays a worker's message if it is one of the peers'; any other message is left alone. */
  relay(from: Worker, msg: unknown): void {
    if (isMessage<Tell>(msg, 'sift:tell')) this.relayNote(from, msg.topic, msg.body);
    else if (isMessage<Ask>(msg, 'sift:ask')) this.relayQuestion(from, msg.id, msg.question);
    else if (isMessage<Answer>(msg, 'sift:answer')) this.questions.get(msg.order)?.(msg.answer);
  }

  /** Asks every worker but `from`; sends `from` the answers when all came, or after PEER_ANSWER_MS. */
  private relayQuestion(from: Worker, id: number, question: string): void {
    const others = this.workers().filter((w) => w !== from && w.isConnected());
    const order = ++this.orders;
    const answers: unknown[] = [];
    let answered = false;
    const reply = () => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      this.questions.delete(order);
      sendToWorker(from, { type: 'sift:answers', id, answers } satisfies Answers, this.log);
    };
    const timer = setTimeout(reply, PEER_ANSWER_MS);
    if (others.length === 0) {
      reply();
      return;
    }
    this.questions.set(order, (answer) => {
      answers.push(answer);
      if (answers.length === others.length) reply();
    });
    for (const w of others) sendToWorker(w, { type: 'sift:question', order, question } satisfies Question, this.log);
  }

  /** Passes a worker's note to every other worker. */
  private relayNote(from: Worker, topic: string, body: unknown): void {
    for (const worker of this.workers())
      if (worker !== from) sendToWorker(worker, { type: 'sift:told', topic, body } satisfies Told, this.log);
  }
}
