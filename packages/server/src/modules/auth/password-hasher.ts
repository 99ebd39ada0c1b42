import { hash, verify } from '@node-rs/argon2';

/** argon2id (the library's default algorithm) with OWASP's parameters; memory is configurable for constrained hosts. */
export class PasswordHasher {
  private dummy: Promise<string> | undefined;
  constructor(private readonly memoryCost: number) {}

  hash(password: string): Promise<string> {
    return hash(password, { memoryCost: this.memoryCost, timeCost: 2, parallelism: 1 });
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  }

  /** Spends the same time as a real check, so an unknown email cannot be told from a wrong password. */
  async burn(password: string): Promise<void> {
    this.dummy ??= this.hash('codeloom-timing-equalizer');
    await this.verify(await this.dummy, password);
  }
}
