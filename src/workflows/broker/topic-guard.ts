import { timingSafeEqual } from 'node:crypto';

export interface TopicLogin {
  username: string;
  password: string;
}

/** Puts the topics under `prefix` behind `login` until the returned function is called. */
export type GuardTopics = (prefix: string, login: TopicLogin) => () => void;

/**
 * Which topics only some clients may use: a client may subscribe to, receive from and publish on a
 * guarded topic only if it logged in with that topic's login. Everything else stays open, as on any
 * plain broker (pipeline events, the seed's tokenless compat jobs).
 */
export class TopicGuards {
  private readonly guards = new Map<string, TopicLogin>();

  protect: GuardTopics = (prefix, login) => {
    this.guards.set(prefix, login);
    return () => {
      if (this.guards.get(prefix) === login) this.guards.delete(prefix);
    };
  };

  /** True when a client with this login (undefined: none) may use this topic. */
  allows(login: TopicLogin | undefined, topic: string): boolean {
    const required = this.guardOf(topic);
    return required === undefined || (login !== undefined && sameLogin(login, required));
  }

  /** A subscription filter names a guarded topic outright; wildcard filters are let through and filtered per message. */
  allowsFilter(login: TopicLogin | undefined, filter: string): boolean {
    return /[+#]/.test(filter) || this.allows(login, filter);
  }

  private guardOf(topic: string): TopicLogin | undefined {
    for (const [prefix, login] of this.guards) {
      if (topic === prefix || topic.startsWith(`${prefix}/`)) return login;
    }
    return undefined;
  }
}

function sameLogin(a: TopicLogin, b: TopicLogin): boolean {
  const x = Buffer.from(a.password);
  const y = Buffer.from(b.password);
  return a.username === b.username && x.length === y.length && timingSafeEqual(x, y);
}
