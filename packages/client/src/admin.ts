import type { CreateDeploymentBody, Deployment, DeploymentTestResult, UpdateDeploymentBody } from '@codeloom/protocol';
import type { Transport } from './transport.js';
import type { RequestOptions, Success } from './types.js';

const seg = (id: string) => {
  if (typeof id !== 'string' || !id) throw new TypeError('id must be a non-empty string');
  return encodeURIComponent(id);
};

/** Model deployments (`/api/v1/admin/deployments`, CONTRACT §12.4): administrators only. */
export class DeploymentsResource {
  constructor(private readonly t: Transport) {}
  async list(options: RequestOptions = {}): Promise<Deployment[]> {
    return (await this.t.request<{ data: Deployment[] }>('/api/v1/admin/deployments', options)).data;
  }
  get(id: string, options: RequestOptions = {}): Promise<Deployment> {
    return this.t.request(`/api/v1/admin/deployments/${seg(id)}`, options);
  }
  create(body: CreateDeploymentBody, options: RequestOptions = {}): Promise<Deployment> {
    return this.t.request('/api/v1/admin/deployments', { ...options, method: 'POST', body });
  }
  update(id: string, body: UpdateDeploymentBody, options: RequestOptions = {}): Promise<Deployment> {
    return this.t.request(`/api/v1/admin/deployments/${seg(id)}`, { ...options, method: 'PATCH', body });
  }
  delete(id: string, options: RequestOptions = {}): Promise<Success> {
    return this.t.request(`/api/v1/admin/deployments/${seg(id)}`, { ...options, method: 'DELETE' });
  }
  /** A one-token call to the deployment's first model: ok or the error, with the latency. */
  test(id: string, options: RequestOptions = {}): Promise<DeploymentTestResult> {
    return this.t.request(`/api/v1/admin/deployments/${seg(id)}/test`, { ...options, method: 'POST' });
  }
}

/** Instance administration (`/api/v1/admin/…`). */
export class AdminResource {
  readonly deployments: DeploymentsResource;
  constructor(t: Transport) {
    this.deployments = new DeploymentsResource(t);
  }
}
