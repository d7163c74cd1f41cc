async def main():
    register_cpu_ci(1, "s")
async with x: register_cpu_ci(2, "s")
register_cpu_ci(3, "s")
