import { LodeConfig } from './lode-config';

describe('LodeConfig', () => {
  describe('LODE_DEFAULT_BRANCH_PROTECTION', () => {
    it("defaults to GitLab's 2 (full protection)", () => {
      expect(LodeConfig.fromEnv({}).defaultBranchProtection).toBe(2);
      expect(LodeConfig.fromEnv({ LODE_DEFAULT_BRANCH_PROTECTION: '' }).defaultBranchProtection).toBe(2);
    });

    it('takes 0, 1, 2 and 3', () => {
      for (const v of [0, 1, 2, 3])
        expect(LodeConfig.fromEnv({ LODE_DEFAULT_BRANCH_PROTECTION: String(v) }).defaultBranchProtection).toBe(v);
    });

    it('refuses anything else at start', () => {
      for (const v of ['4', '-1', 'full', '1.5'])
        expect(() => LodeConfig.fromEnv({ LODE_DEFAULT_BRANCH_PROTECTION: v })).toThrow(
          /LODE_DEFAULT_BRANCH_PROTECTION/,
        );
    });
  });

  describe('LODE_WEBHOOK_LOG_DAYS', () => {
    it('keeps the delivery log 30 days unless set, at least 1', () => {
      expect(LodeConfig.fromEnv({}).webhookLogDays).toBe(30);
      expect(LodeConfig.fromEnv({ LODE_WEBHOOK_LOG_DAYS: '7' }).webhookLogDays).toBe(7);
      for (const v of ['0', '-1', 'week'])
        expect(() => LodeConfig.fromEnv({ LODE_WEBHOOK_LOG_DAYS: v })).toThrow(/LODE_WEBHOOK_LOG_DAYS/);
    });
  });

  describe('LODE_DB_PREPARED_STATEMENTS', () => {
    it('is on unless set false (a pooler that keeps no named statements)', () => {
      expect(LodeConfig.fromEnv({}).dbPreparedStatements).toBe(true);
      expect(LodeConfig.fromEnv({ LODE_DB_PREPARED_STATEMENTS: '' }).dbPreparedStatements).toBe(true);
      expect(LodeConfig.fromEnv({ LODE_DB_PREPARED_STATEMENTS: 'true' }).dbPreparedStatements).toBe(true);
      expect(LodeConfig.fromEnv({ LODE_DB_PREPARED_STATEMENTS: 'false' }).dbPreparedStatements).toBe(false);
    });
  });

  describe('LODE_LOG_FORMAT', () => {
    it('takes json and pretty; by default pretty on a terminal, json otherwise', () => {
      expect(LodeConfig.fromEnv({ LODE_LOG_FORMAT: 'json' }).logFormat).toBe('json');
      expect(LodeConfig.fromEnv({ LODE_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
      expect(LodeConfig.fromEnv({}).logFormat).toBe(process.stdout.isTTY ? 'pretty' : 'json');
      expect(() => LodeConfig.fromEnv({ LODE_LOG_FORMAT: 'xml' })).toThrow(
        'LODE_LOG_FORMAT must be json or pretty, not xml',
      );
    });
  });

  describe('LODE_METRICS_ALLOW', () => {
    it('defaults to loopback and takes addresses and CIDRs, separated by commas or spaces', () => {
      expect(LodeConfig.fromEnv({}).metricsAllow).toEqual(['127.0.0.0/8', '::1/128']);
      expect(LodeConfig.fromEnv({ LODE_METRICS_ALLOW: '10.0.0.0/8, 192.168.1.7 fd00::/8' }).metricsAllow).toEqual([
        '10.0.0.0/8',
        '192.168.1.7',
        'fd00::/8',
      ]);
    });

    it('refuses a bad entry at start, naming it', () => {
      expect(() => LodeConfig.fromEnv({ LODE_METRICS_ALLOW: '10.0.0.0/8,prometheus' })).toThrow(
        'LODE_METRICS_ALLOW: prometheus is not an address or a CIDR',
      );
    });
  });

  describe('embedded mode', () => {
    it("runs on the embedded database without DATABASE_URL, and on BullMQ's PostgreSQL backend without REDIS_URL", () => {
      const embedded = LodeConfig.fromEnv({});
      expect(embedded.embeddedDatabase).toBe(true);
      expect(embedded.databaseUrl).toBe('');
      expect(embedded.queueBackend).toBe('postgres');
      const production = LodeConfig.fromEnv({ DATABASE_URL: 'postgres://db/lode', REDIS_URL: 'redis://cache:6379' });
      expect(production.embeddedDatabase).toBe(false);
      expect(production.databaseUrl).toBe('postgres://db/lode');
      expect(production.queueBackend).toBe('redis');
      expect(LodeConfig.fromEnv({ DATABASE_URL: 'postgres://db/lode' }).queueBackend).toBe('postgres');
    });

    it('refuses to split the embedded database between an API and a worker process', () => {
      expect(() => LodeConfig.fromEnv({ LODE_ROLE: 'api' })).toThrow(/LODE_ROLE=api needs DATABASE_URL/);
      expect(() => LodeConfig.fromEnv({ LODE_ROLE: 'worker' })).toThrow(/LODE_ROLE=worker needs DATABASE_URL/);
      expect(LodeConfig.fromEnv({ LODE_ROLE: 'worker', DATABASE_URL: 'postgres://db/lode' }).role).toBe('worker');
    });
  });

  describe('LODE_WORKER_HEALTH_PORT', () => {
    it('is off (0) unless set, and must be a port', () => {
      expect(LodeConfig.fromEnv({}).workerHealthPort).toBe(0);
      expect(LodeConfig.fromEnv({ LODE_WORKER_HEALTH_PORT: '8081' }).workerHealthPort).toBe(8081);
      expect(() => LodeConfig.fromEnv({ LODE_WORKER_HEALTH_PORT: '70000' })).toThrow(
        'LODE_WORKER_HEALTH_PORT must be a port (0 to 65535), not 70000',
      );
      expect(() => LodeConfig.fromEnv({ LODE_WORKER_HEALTH_PORT: 'yes' })).toThrow(
        'LODE_WORKER_HEALTH_PORT must be a non-negative integer, not yes',
      );
    });
  });

  describe('LODE_GITLAB_VERSION', () => {
    it('reports 10.8.0 unless set, and takes major.minor.patch with an optional edition', () => {
      expect(LodeConfig.fromEnv({}).gitlabVersion).toBe('10.8.0');
      expect(LodeConfig.fromEnv({ LODE_GITLAB_VERSION: '' }).gitlabVersion).toBe('10.8.0');
      expect(LodeConfig.fromEnv({ LODE_GITLAB_VERSION: '16.11.2' }).gitlabVersion).toBe('16.11.2');
      expect(LodeConfig.fromEnv({ LODE_GITLAB_VERSION: '14.10.0-ee' }).gitlabVersion).toBe('14.10.0-ee');
    });

    it.each(['10.8', '10', 'v10.8.0', '10.8.0 ', 'latest'])(
      'refuses %p, which semver or Terraform cannot read',
      (v) => {
        expect(() => LodeConfig.fromEnv({ LODE_GITLAB_VERSION: v })).toThrow(/^LODE_GITLAB_VERSION must be a version/);
      },
    );
  });

  describe('LODE_GPG_KEY_CREATE_ANSWER', () => {
    it('answers an array unless set to object', () => {
      expect(LodeConfig.fromEnv({}).gpgKeyCreateAnswer).toBe('array');
      expect(LodeConfig.fromEnv({ LODE_GPG_KEY_CREATE_ANSWER: 'object' }).gpgKeyCreateAnswer).toBe('object');
      expect(() => LodeConfig.fromEnv({ LODE_GPG_KEY_CREATE_ANSWER: 'list' })).toThrow(
        'LODE_GPG_KEY_CREATE_ANSWER must be array or object, not list',
      );
    });
  });
});
