import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { hyphensForUnderscores } from '@/legacy/selections';
import { NotFoundError } from '@/core/errors';
import { projectVersion } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';

/**
 * A path naming another project or version is a 404, before the token is looked at (AppModule lists the
 * global guards in the order they run; only a body of the wrong type is refused earlier). The project's
 * name is compared with hyphens read as underscores, in both layouts, as the legacy layout reads every name.
 */
@Injectable()
export class ProjectRouteGuard implements CanActivate {
  private readonly name: string;
  private readonly version: string;

  constructor(served: ServedProject) {
    this.name = hyphensForUnderscores(served.current.name);
    this.version = projectVersion(served.current);
  }

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const { project, version } = context.switchToHttp().getRequest<Request>().params as Record<
      string,
      string | undefined
    >;
    if (project === undefined && version === undefined) return true;
    if (hyphensForUnderscores(project ?? '') !== this.name || version !== this.version) {
      throw new NotFoundError('No such project or version');
    }
    return true;
  }
}
