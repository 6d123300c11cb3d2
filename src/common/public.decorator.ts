import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'drey:public';

/** The route needs no token. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
