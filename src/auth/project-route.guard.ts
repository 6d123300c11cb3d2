import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { NotFoundError } from '@/core/errors';
import type { Project } from '@/core/project/project';
import { projectVersion } from '@/core/project/project';
import { PROJECT } from '@/project/project.tokens';

/** A path naming another project or version is a 404, before anything else is looked at. */
@Injectable()
export class ProjectRouteGuard implements CanActivate {
  private readonly name: string;
  private readonly version: string;

  constructor(@Inject(PROJECT) project: Project) {
    this.name = normalise(project.name);
    this.version = projectVersion(project);
  }

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const { project, version } = context.switchToHttp().getRequest<Request>().params as Record<
      string,
      string | undefined
    >;
    if (project === undefined && version === undefined) return true;
    if (normalise(project ?? '') !== this.name || version !== this.version) {
      throw new NotFoundError('No such project or version');
    }
    return true;
  }
}

// The legacy layout accepts hyphens for underscores in names.
function normalise(name: string): string {
  return name.replace(/-/g, '_');
}
